import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { hash as nodeRsHash } from '@node-rs/argon2';
import { argon2Hashing, argon2NeedsRehash } from '../../core/dist/hashing.js';
import { HashingThreads } from '../../core/dist/hashing-threads.js';

// Small costs: these tests are about the threads and the PHC strings, not about argon2's cost.
const COST = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

describe('password hashing on the core hashing threads (decision 57)', () => {
  let threads: HashingThreads;
  beforeEach(() => (threads = new HashingThreads(2)));
  afterEach(() => threads.close());

  it('hashes argon2id v1.3 at the cost given, with a random salt, and verifies only the right secret', async () => {
    const hasher = argon2Hashing(undefined, () => threads).withCost(COST);
    const [a, b] = await Promise.all([hasher.hash('correct horse'), hasher.hash('correct horse')]);
    expect(a).to.match(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(b).to.not.equal(a);
    expect(await hasher.verify(a, 'correct horse')).to.equal(true);
    expect(await hasher.verify(a, 'correct horsf')).to.equal(false);
  });

  it('verifies hashes that node-argon2 wrote (parameters in the order m, p, t)', async () => {
    const hasher = argon2Hashing(undefined, () => threads).withCost(COST);
    // "secret" hashed by node-argon2 0.45 (argon2id, m=1024, t=1, p=1), the library used before.
    const written = '$argon2id$v=19$m=1024,p=1,t=1$ZXhhbXBsZXNhbHQxMjM0NQ$Judhys1khjeynZG6qPAQkDCn7AegcdTdldomdOz9HHs';
    const mine = await nodeRsHash('secret', { ...COST, salt: Buffer.from('examplesalt12345') });
    expect(mine.slice(mine.lastIndexOf('$'))).to.equal(written.slice(written.lastIndexOf('$')));
    expect(await hasher.verify(written, 'secret')).to.equal(true);
    expect(await hasher.verify(written, 'Secret')).to.equal(false);
  });

  it('answers false, not an error, for a stored string that is not an argon2 hash', async () => {
    const hasher = argon2Hashing(undefined, () => threads).withCost(COST);
    expect(await hasher.verify('$2b$10$abcdefghijklmnopqrstuu', 'x')).to.equal(false);
    expect(await hasher.verify('', 'x')).to.equal(false);
  });

  it('runs at most as many jobs as it has threads; the rest wait in order and all complete', async () => {
    const hasher = argon2Hashing(undefined, () => threads).withCost(COST);
    const done = Promise.all(Array.from({ length: 7 }, (_, i) => hasher.hash(`secret ${i}`)));
    expect(threads.load).to.deep.equal({ running: 2, waiting: 5 });
    const hashes = await done;
    expect(new Set(hashes).size).to.equal(7);
    expect(threads.load).to.deep.equal({ running: 0, waiting: 0 });
  });

  it('fails the job of a thread that dies and starts a new thread for the next one', async () => {
    const one = new HashingThreads(1);
    try {
      const hasher = argon2Hashing(undefined, () => one).withCost(COST);
      const running = hasher.hash('first');
      // The thread is the pool's only one: ending it mid-job is what a crash looks like from outside.
      const [thread] = (one as unknown as { threads: { worker: { terminate(): Promise<number> } }[] }).threads;
      await thread!.worker.terminate();
      const error = await running.then(
        () => null,
        (err: Error) => err,
      );
      expect(error?.message).to.match(/hashing thread exited/);
      expect(await hasher.verify(await hasher.hash('second'), 'second')).to.equal(true);
    } finally {
      await one.close();
    }
  });

  describe('argon2NeedsRehash', () => {
    const at = (cost: typeof COST, variant: 'argon2id' | 'argon2i' = 'argon2id', version = 19) =>
      `$${variant}$v=${version}$m=${cost.memoryCost},t=${cost.timeCost},p=${cost.parallelism}$ZXhhbXBsZXNhbHQxMjM0NQ$Judhys1khjeynZG6qPAQkDCn7AegcdTdldomdOz9HHs`;

    it('is false for argon2id v1.3 at the same cost, whatever the order of the parameters', () => {
      expect(argon2NeedsRehash(at(COST), COST)).to.equal(false);
      expect(
        argon2NeedsRehash(
          '$argon2id$v=19$m=1024,p=1,t=1$ZXhhbXBsZXNhbHQxMjM0NQ$Judhys1khjeynZG6qPAQkDCn7AegcdTdldomdOz9HHs',
          COST,
        ),
      ).to.equal(false);
    });

    it('is true for another memory, time or parallelism cost, another variant or version, or no argon2 string', () => {
      expect(argon2NeedsRehash(at({ ...COST, memoryCost: 2048 }), COST)).to.equal(true);
      expect(argon2NeedsRehash(at({ ...COST, timeCost: 2 }), COST)).to.equal(true);
      expect(argon2NeedsRehash(at({ ...COST, parallelism: 2 }), COST)).to.equal(true);
      expect(argon2NeedsRehash(at(COST, 'argon2i'), COST)).to.equal(true);
      expect(argon2NeedsRehash(at(COST, 'argon2id', 16), COST)).to.equal(true);
      expect(argon2NeedsRehash('$2b$10$abcdefghijklmnopqrstuu', COST)).to.equal(true);
    });
  });
});

describe('the core worker threads run under node --input-type=module (their sources are CommonJS)', () => {
  it('hashes on a hashing thread and signs on a signing thread in a process started with that flag', () => {
    const dist = new URL('../../core/dist/', import.meta.url).href;
    const script = `
      import { generateKeyPairSync } from 'node:crypto';
      import { argon2Hashing } from '${dist}hashing.js';
      import { HashingThreads } from '${dist}hashing-threads.js';
      import { SigningThreads } from '${dist}oauth/signing-threads.js';
      const hashing = new HashingThreads(1);
      const hash = await argon2Hashing(undefined, () => hashing).withCost({ memoryCost: 1024, timeCost: 1, parallelism: 1 }).hash('x');
      hashing.close();
      const signing = new SigningThreads(1);
      const { privateKey } = generateKeyPairSync('ed25519');
      const sig = await signing.sign(privateKey, [null, privateKey], 'input');
      await signing.close();
      console.log(hash.slice(0, 9), sig.length);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.stderr).to.equal('');
    expect(run.stdout.trim()).to.equal('$argon2id 86');
  });
});
