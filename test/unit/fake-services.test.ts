/**
 * The testing kit's fakeServices: the core's stores behind the management services have no fake
 * (decision 63). Using one says so; copying the services, as a plugin's tests do to replace one
 * member, does not touch them.
 */
import { expect } from 'chai';
import { fakeServices } from '@gatehouse-auth/testing';

describe('testing kit: fakeServices without the management stores', () => {
  it('throws on any use of accountStore or appStore, naming it', () => {
    const services = fakeServices();
    expect(() => services.accountStore.createUser).to.throw('fakeServices has no accountStore: test against buildApp');
    expect(() => services.appStore.configApps).to.throw('fakeServices has no appStore: test against buildApp');
  });

  it('can be copied with a spread, members replaced', () => {
    const services = fakeServices();
    const copy = { ...services, secrets: { ...services.secrets, mac: (v: string) => `x${v}` } };
    expect(copy.secrets.mac('a')).to.equal('xa');
    expect(copy.users).to.equal(services.users);
  });
});
