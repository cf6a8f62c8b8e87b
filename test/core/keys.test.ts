import { expect } from 'chai';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';

describe('signing keys', () => {
  let gatehouse: Gatehouse;
  const clock = new FakeClock(new Date('2026-03-01T00:00:00Z'));

  before(async () => {
    const config = parseConfig(
      {
        database: { url: 'sqlite::memory:' },
        log: { level: 'silent' },
        secrets: { encryption_key: Buffer.alloc(32, 3).toString('base64') },
      },
      {},
    );
    gatehouse = await buildApp(config, { logger: createLogger('silent'), clock });
  });
  after(() => gatehouse.close());

  it('generates one key per configured algorithm on first use (RS256, ES256), private halves encrypted', async () => {
    const { keys, sql } = gatehouse.container.cradle;
    const jwks = await keys.jwks();
    expect(jwks.keys.map((k) => k.alg).sort()).to.deep.equal(['ES256', 'RS256']);
    expect(jwks.keys.find((k) => k.alg === 'ES256')).to.include({ use: 'sig', kty: 'EC' });
    expect(jwks.keys.find((k) => k.alg === 'RS256')).to.include({ use: 'sig', kty: 'RSA' });
    for (const key of jwks.keys) expect(key).to.not.have.any.keys('d', 'p', 'q');
    const rows = await sql.select<{ private_sealed: string }>('SELECT private_sealed FROM signing_keys');
    expect(rows).to.have.length(2);
    for (const row of rows) {
      expect(row.private_sealed).to.match(/^v1\./);
      expect(row.private_sealed).to.not.include('"d"');
    }
    expect((await keys.signer('RS256')).alg).to.equal('RS256');
    expect((await keys.signer('ES256')).alg).to.equal('ES256');
  });

  it('rotation publishes the next key of every algorithm first, signs with it from its activation, and retires the old one later', async () => {
    const { keys } = gatehouse.container.cradle;
    const old = [(await keys.signer('RS256')).kid, (await keys.signer('ES256')).kid];
    const rotated = await keys.rotate(3600, 7200);
    expect(rotated.map((r) => r.alg)).to.deep.equal(['RS256', 'ES256']);
    const fresh = rotated.map((r) => r.kid);
    expect(rotated[0]!.activatesAt.getTime()).to.equal(clock.now().getTime() + 3600_000);

    const published = () => keys.jwks().then((j) => j.keys.map((k) => k.kid));
    expect(await published()).to.have.members([...old, ...fresh]);
    expect((await keys.signer('RS256')).kid).to.equal(old[0]);

    clock.advance(3600 + 6); // past activation and the signer cache
    expect((await keys.signer('RS256')).kid).to.equal(fresh[0]);
    expect((await keys.signer('ES256')).kid).to.equal(fresh[1]);
    expect(await published()).to.have.members([...old, ...fresh]);

    clock.advance(7200); // every token the old keys signed has expired
    expect(await published()).to.have.members(fresh);
    const kids = (await keys.jwks()).keys.map((k) => k.kid);
    expect(new Set(kids).size).to.equal(kids.length);
  });
});
