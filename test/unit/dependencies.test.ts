import { expect } from 'chai';
import { DependencyChecks } from '../../core/dist/observability/dependencies.js';

describe('dependency checks (/health/dependencies)', function () {
  it('reports each check up, or down with its error, and who checks it', async function () {
    const checks = new DependencyChecks();
    checks.add('database', 'core', async () => 'answer');
    checks.add('smtp:mail', '@acme/plugin', async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:25');
    });
    const states = await checks.states();
    expect(states.map(({ name, owner, up, reason }) => ({ name, owner, up, reason }))).to.deep.equal([
      { name: 'database', owner: 'core', up: true, reason: undefined },
      { name: 'smtp:mail', owner: '@acme/plugin', up: false, reason: 'connect ECONNREFUSED 127.0.0.1:25' },
    ]);
    expect(states[0]!.ms).to.be.a('number');
    expect(Date.parse(states[0]!.checkedAt)).to.be.closeTo(Date.now(), 5000);
  });

  it('a check past the timeout is down, and a synchronous throw is a failure too', async function () {
    const checks = new DependencyChecks({ timeoutMs: 50, reuseMs: 0 });
    checks.add('slow', 'core', () => new Promise((resolve) => setTimeout(resolve, 1000).unref()));
    checks.add('throws', 'core', () => {
      throw new Error('not configured');
    });
    const [slow, throws] = await checks.states();
    expect(slow).to.include({ up: false, reason: 'no answer within 50 ms' });
    expect(slow!.ms).to.be.below(900);
    expect(throws).to.include({ up: false, reason: 'not configured' });
  });

  it('reuses answers younger than reuseMs, so scrapes do not hammer a relay; then checks again', async function () {
    let calls = 0;
    const checks = new DependencyChecks({ timeoutMs: 1000, reuseMs: 10_000 });
    checks.add('relay', 'core', async () => void calls++);
    await Promise.all([checks.states(1_000), checks.states(1_000)]);
    await checks.states(10_999);
    expect(calls).to.equal(1);
    await checks.states(11_000);
    expect(calls).to.equal(2);
  });

  it('refuses a second check under one name, and names that would not make a metric label', function () {
    const checks = new DependencyChecks();
    checks.add('smtp:mail', '@acme/a', async () => undefined);
    expect(() => checks.add('smtp:mail', '@acme/b', async () => undefined)).to.throw(
      'dependency "smtp:mail" is already checked by @acme/a',
    );
    expect(() => checks.add('', 'core', async () => undefined)).to.throw(/dependency name ""/);
    expect(() => checks.add('a b', 'core', async () => undefined)).to.throw(/dependency name "a b"/);
    expect(() => checks.add('x'.repeat(65), 'core', async () => undefined)).to.throw(/at most 64/);
  });
});
