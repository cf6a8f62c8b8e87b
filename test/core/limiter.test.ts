import { expect } from 'chai';
import { Limiter } from '../../core/dist/util/limiter.js';

describe('Limiter (services.heavy)', () => {
  it('runs at most `capacity` tasks at once, in order, and survives failures', async () => {
    const limiter = new Limiter(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (i: number) =>
      limiter.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        order.push(i);
        if (i === 2) throw new Error('boom');
        return i;
      });
    const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(task));
    expect(peak).to.equal(2);
    expect(results.map((r) => r.status)).to.deep.equal([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(order).to.have.members([0, 1, 2, 3, 4, 5]);
  });
});

describe('Limiter queue bound', () => {
  it('refuses with 503 TEMPORARILY_UNAVAILABLE once maxWaiting tasks wait', async () => {
    const limiter = new Limiter(1, 2);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = limiter.run(() => gate);
    const waiting = [limiter.run(async () => 1), limiter.run(async () => 2)];
    const refused = await limiter
      .run(async () => 3)
      .then(
        () => null,
        (err: unknown) => err as { status: number; code: string },
      );
    expect(refused).to.include({ status: 503, code: 'TEMPORARILY_UNAVAILABLE' });
    release();
    await running;
    expect(await Promise.all(waiting)).to.deep.equal([1, 2]);
  });
});
