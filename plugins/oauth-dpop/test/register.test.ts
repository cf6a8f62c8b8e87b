/** The plugin on the testing kit's fakes: what it registers, its options, and its stateless nonces. */
import { expect } from 'chai';
import { fakeServices, registerWithFakes } from '@gatehouse-auth/testing';
import plugin, { statelessNonces } from '../src/index.js';

describe('@gatehouse-auth/oauth-dpop (fakes)', function () {
  it('registers one token binding, the discovery member and the app setting', async function () {
    const registered = await registerWithFakes(plugin);
    expect(registered.tokenBinding?.algorithms).to.deep.equal(['ES256', 'EdDSA', 'Ed25519']);
    expect(registered.metadata.get('dpop_signing_alg_values_supported')).to.deep.equal(['ES256', 'EdDSA', 'Ed25519']);
    expect(Object.keys(plugin.appConfig ?? {})).to.deep.equal(['dpop_bound_access_tokens']);
  });

  it('refuses none and HMAC algorithms as options', function () {
    for (const alg of ['none', 'HS256']) {
      expect(plugin.options!.safeParse({ algorithms: [alg] }).success, alg).to.equal(false);
    }
    expect(plugin.options!.safeParse({ algorithms: ['PS256', 'RS256'] }).success).to.equal(true);
  });

  it('nonces: the same on every node with the key, rotating, the previous slot still taken', function () {
    const services = fakeServices();
    const nonces = statelessNonces(services, 300);
    const other = statelessNonces(services, 300);
    const first = nonces.current();
    expect(other.accepts(first)).to.equal(true);
    services.clock.advance(300);
    const second = nonces.current();
    expect(second).to.not.equal(first);
    expect(nonces.accepts(first)).to.equal(true);
    services.clock.advance(300);
    expect(nonces.accepts(first)).to.equal(false);
    expect(nonces.accepts(second)).to.equal(true);
    expect(nonces.accepts(`${second.split('.')[0]}.forged`)).to.equal(false);
    expect(nonces.accepts('garbage')).to.equal(false);
  });

  it('nonces of another server key are refused', function () {
    const mine = statelessNonces(fakeServices(), 300);
    const theirs = statelessNonces(
      { ...fakeServices(), secrets: { ...fakeServices().secrets, mac: (v: string) => `x${v}` } },
      300,
    );
    expect(mine.accepts(theirs.current())).to.equal(false);
  });
});
