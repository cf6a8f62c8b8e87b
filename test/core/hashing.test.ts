import { expect } from 'chai';
import { hash as nodeRsHash } from '@node-rs/argon2';
import { argon2Hashing, argon2NeedsRehash } from '../../core/dist/hashing.js';

// Small costs: these tests are about the PHC strings, not about argon2's cost.
const COST = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

describe("the core's password hashing, in-process (decisions 57 and 77)", () => {
  const hasher = argon2Hashing().withCost(COST);

  it('hashes argon2id v1.3 at the cost given, with a random salt, and verifies only the right secret', async () => {
    const [a, b] = await Promise.all([hasher.hash('correct horse'), hasher.hash('correct horse')]);
    expect(a).to.match(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(b).to.not.equal(a);
    expect(await hasher.verify(a, 'correct horse')).to.equal(true);
    expect(await hasher.verify(a, 'correct horsf')).to.equal(false);
  });

  it('verifies hashes that node-argon2 wrote (parameters in the order m, p, t)', async () => {
    // "secret" hashed by node-argon2 0.45 (argon2id, m=1024, t=1, p=1), the library used before.
    const written = '$argon2id$v=19$m=1024,p=1,t=1$ZXhhbXBsZXNhbHQxMjM0NQ$Judhys1khjeynZG6qPAQkDCn7AegcdTdldomdOz9HHs';
    const mine = await nodeRsHash('secret', { ...COST, salt: Buffer.from('examplesalt12345') });
    expect(mine.slice(mine.lastIndexOf('$'))).to.equal(written.slice(written.lastIndexOf('$')));
    expect(await hasher.verify(written, 'secret')).to.equal(true);
    expect(await hasher.verify(written, 'Secret')).to.equal(false);
  });

  it('answers false, not an error, for a stored string that is not an argon2 hash', async () => {
    expect(await hasher.verify('$2b$10$abcdefghijklmnopqrstuu', 'x')).to.equal(false);
    expect(await hasher.verify('', 'x')).to.equal(false);
  });

  it('runs each job through the limit it is given, and through the runner it is given', async () => {
    const seen: string[] = [];
    const limited = argon2Hashing(
      (work) => (seen.push('limit'), work()),
      async (job) => (seen.push(job.op), job.op === 'hash' ? 'made' : true),
    ).withCost(COST);
    expect(await limited.hash('x')).to.equal('made');
    expect(await limited.verify('made', 'x')).to.equal(true);
    expect(seen).to.deep.equal(['limit', 'hash', 'limit', 'verify']);
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
