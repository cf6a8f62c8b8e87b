import { expect } from 'chai';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/core/testing';

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

  it('generates one key on first use, with a unique kid, and keeps its private half encrypted', async () => {
    const { keys, sql } = gatehouse.container.cradle;
    const jwks = await keys.jwks();
    expect(jwks.keys).to.have.length(1);
    expect(jwks.keys[0]).to.include({ alg: 'ES256', use: 'sig', kty: 'EC' });
    expect(jwks.keys[0]).to.not.have.property('d');
    const [row] = await sql.select<{ private_sealed: string }>('SELECT private_sealed FROM signing_keys');
    expect(row!.private_sealed).to.match(/^v1\./);
    expect(row!.private_sealed).to.not.include('"d"');
  });

  it('rotation publishes the next key first, signs with it from its activation, and retires the old one later', async () => {
    const { keys } = gatehouse.container.cradle;
    const old = (await keys.signer()).kid;
    const { kid, activatesAt } = await keys.rotate(3600, 7200);
    expect(activatesAt.getTime()).to.equal(clock.now().getTime() + 3600_000);

    const published = () => keys.jwks().then((j) => j.keys.map((k) => k.kid));
    expect(await published()).to.have.members([old, kid]);
    expect((await keys.signer()).kid).to.equal(old);

    clock.advance(3600 + 6); // past activation and the signer cache
    expect((await keys.signer()).kid).to.equal(kid);
    expect(await published()).to.have.members([old, kid]);

    clock.advance(7200); // every token the old key signed has expired
    expect(await published()).to.deep.equal([kid]);
    const kids = (await keys.jwks()).keys.map((k) => k.kid);
    expect(new Set(kids).size).to.equal(kids.length);
  });
});
