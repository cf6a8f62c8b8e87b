/**
 * Issue 11: FIDO2 through the JSON API with a software authenticator in Node
 * (test/support/soft-authenticator.ts), on the demo config served at http://localhost:<port>
 * (rp_id localhost): registration through the setup API, the second stage of demo-app with the
 * user's passkeys, the first stage of demo-spa without a username, and the failure rows: a
 * replayed assertion, a counter that goes backwards, another origin, no user verification where
 * the app requires it, a user handle of someone else, a credential id registered twice.
 */
import { expect } from 'chai';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { SoftAuthenticator } from '../support/soft-authenticator.js';
import { Browser, loginRequestId, locationOf } from '../oauth/support.js';
import { DEMO_SPA, startAuthorization, type DemoServer } from '../oauth/demo-server.js';
import { admin, atSecondStage, call, idTokenAfter, methodOf, startDemoServer } from '../devices/support.js';

const INITIATE = '/verification-srv/authentication/FIDO2/initiation';
const VERIFY = '/verification-srv/authentication/FIDO2/verification';

describe('FIDO2 through the JSON API, with a software authenticator (issue 11)', function () {
  let server: DemoServer;
  let key: SoftAuthenticator;

  before(async function () {
    server = await startDemoServer({ host: 'localhost' });
    key = new SoftAuthenticator({ origin: server.issuer });
    await register(key, server.alice.id, 'Software key');
  });
  after(() => server?.close());
  // The refusals here are failures that fds-velocity counts (back-off after 5): let it pass.
  afterEach(() => server.clock.advance(1000));

  async function register(authenticator: SoftAuthenticator, sub: string, name?: string, credentialId?: string) {
    const started = await call(server, '/verification-actions-srv/setup/FIDO2/initiation', { sub, name }, admin);
    expect(started.status, JSON.stringify(started)).to.equal(200);
    const options = started.data.fido2_options as unknown as PublicKeyCredentialCreationOptionsJSON;
    const response = await authenticator.register(options, credentialId ? { credentialId } : {});
    return call(
      server,
      '/verification-actions-srv/setup/FIDO2/verification',
      { sub, fido2_client_response: JSON.stringify(response) },
      admin,
    );
  }

  /** demo-app's second stage with FIDO2: the options name alice's passkeys. */
  async function secondStage() {
    const at = await atSecondStage(server);
    const started = await call(server, INITIATE, {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
    });
    expect(started.status, JSON.stringify(started)).to.equal(200);
    return {
      at,
      exchangeId: (started.data.exchange_id as { exchange_id: string }).exchange_id,
      statusId: started.data.status_id as string,
      options: started.data.fido2_options as unknown as PublicKeyCredentialRequestOptionsJSON,
    };
  }

  const verify = (exchangeId: string, response: unknown) =>
    call(server, VERIFY, { exchange_id: exchangeId, fido2_client_response: JSON.stringify(response) });

  it('registers through the setup API: listed, renamed; the same credential id for another user is 409 CREDENTIAL_EXISTS', async function () {
    const fido2 = await methodOf(server, server.alice.id, 'FIDO2');
    expect(fido2.enrolled).to.equal(true);
    expect(fido2.credentials.map((c) => c.label)).to.deep.equal(['Software key']);
    const path = `/verification-actions-srv/setup/users/${server.alice.id}/methods/FIDO2/${fido2.credentials[0]!.id}`;
    expect((await call(server, path, { name: 'Work laptop' }, admin, 'PATCH')).data).to.deep.include({
      name: 'Work laptop',
    });
    const unknown = await call(server, `${path}x`, { name: 'x' }, admin, 'PATCH');
    expect([unknown.status, unknown.code]).to.deep.equal([404, 'CREDENTIAL_NOT_FOUND']);

    const { id: bob } = await server.gatehouse.container.cradle.users.create({ username: 'bob-fido2' });
    const twice = await register(
      new SoftAuthenticator({ origin: server.issuer }),
      bob,
      undefined,
      key.credentials[0]!.id,
    );
    expect([twice.status, twice.code]).to.deep.equal([409, 'CREDENTIAL_EXISTS']);
  });

  it('second stage: the options list alice’s passkey; a valid assertion gives tokens with amr hwk+mfa', async function () {
    const { at, exchangeId, statusId, options } = await secondStage();
    expect(options.allowCredentials?.map((c) => c.id)).to.deep.equal([key.credentials[0]!.id]);
    expect(options.rpId).to.equal('localhost');
    const verified = await verify(exchangeId, await key.authenticate(options));
    expect(verified.status, JSON.stringify(verified)).to.equal(200);
    expect(verified.data.status_id).to.equal(statusId);
    expect((await idTokenAfter(server, at, statusId, 'FIDO2')).amr).to.include.members(['pwd', 'hwk', 'mfa']);
  });

  it('Ed25519 and RS256 (Windows Hello) keys register and sign in too', async function () {
    for (const alg of ['EdDSA', 'RS256'] as const) {
      const other = new SoftAuthenticator({ origin: server.issuer, alg });
      expect((await register(other, server.alice.id, alg)).status, alg).to.equal(200);
      const { exchangeId, options } = await secondStage();
      const verified = await verify(exchangeId, await other.authenticate(options));
      expect(verified.status, `${alg}: ${JSON.stringify(verified)}`).to.equal(200);
    }
  });

  it('a replayed assertion is refused: on its exchange (spent) and on a new one (another challenge)', async function () {
    const first = await secondStage();
    const assertion = await key.authenticate(first.options);
    expect((await verify(first.exchangeId, assertion)).status).to.equal(200);
    const again = await verify(first.exchangeId, assertion);
    expect([again.status, again.code]).to.deep.equal([409, 'EXCHANGE_USED']);
    const next = await secondStage();
    const replayed = await verify(next.exchangeId, assertion);
    expect([replayed.status, replayed.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
  });

  it('each assertion gets a fresh challenge of ≥ 16 random bytes, a 5–10 min ceremony, and dies with its exchange (WebAuthn §13.4.3)', async function () {
    const first = await secondStage();
    const second = await secondStage();
    expect(Buffer.from(first.options.challenge, 'base64url').length).to.be.at.least(16);
    expect(second.options.challenge).to.not.equal(first.options.challenge);
    expect(first.options.timeout).to.be.within(300_000, 600_000);
    // Past the exchange's lifetime (verification.exchange_ttl, 600 s) the challenge is gone too.
    const late = await key.authenticate(first.options);
    server.clock.advance(601_000);
    const expired = await verify(first.exchangeId, late);
    expect([expired.status, expired.code]).to.deep.equal([410, 'EXCHANGE_EXPIRED']);
  });

  it('clientData of another ceremony (webauthn.create in a sign-in) is refused: 401 VERIFICATION_FAILED', async function () {
    const { exchangeId, options } = await secondStage();
    const refused = await verify(exchangeId, await key.authenticate(options, { type: 'webauthn.create' }));
    expect([refused.status, refused.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
    // The exchange is still good for the genuine assertion.
    expect((await verify(exchangeId, await key.authenticate(options))).status).to.equal(200);
  });

  it('a counter that goes backwards is refused (401) and recorded as a possible clone', async function () {
    const { exchangeId, options } = await secondStage();
    const backwards = await verify(exchangeId, await key.authenticate(options, { counter: 1 }));
    expect([backwards.status, backwards.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
    const events = await server.gatehouse.container.cradle.events.recent({
      types: ['fido2.counter_regressed'],
      userId: server.alice.id,
      limit: 5,
    });
    expect(events).to.have.length(1);
  });

  it('another origin, another RP id, no user presence: 401 VERIFICATION_FAILED', async function () {
    for (const over of [{ origin: 'http://evil.localhost:1234' }, { rpId: 'example.com' }, { userPresent: false }]) {
      const { exchangeId, options } = await secondStage();
      const refused = await verify(exchangeId, await key.authenticate(options, over));
      expect([refused.status, refused.code], JSON.stringify(over)).to.deep.equal([401, 'VERIFICATION_FAILED']);
    }
  });

  it('no user verification: accepted where the app prefers it, refused where it requires it', async function () {
    const preferred = await secondStage();
    const withoutUv = await verify(
      preferred.exchangeId,
      await key.authenticate(preferred.options, { userVerified: false }),
    );
    expect(withoutUv.status, JSON.stringify(withoutUv)).to.equal(200);
    const strict = await startDemoServer({
      host: 'localhost',
      configure(config) {
        config.apps.find((a) => a.client_id === 'demo-app')!.methods = { FIDO2: { user_verification: 'required' } };
      },
    });
    try {
      const strictKey = new SoftAuthenticator({ origin: strict.issuer });
      const saved = server;
      server = strict;
      try {
        expect((await register(strictKey, strict.alice.id)).status).to.equal(200);
        const { exchangeId, options } = await secondStage();
        expect(options.userVerification).to.equal('required');
        const refused = await verify(exchangeId, await strictKey.authenticate(options, { userVerified: false }));
        expect([refused.status, refused.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
      } finally {
        server = saved;
      }
    } finally {
      await strict.close();
    }
  });

  it('first stage without a username (demo-spa): the passkey names alice; someone else’s user handle fails', async function () {
    const browser = new Browser(server);
    const auth = await startAuthorization(browser, server, DEMO_SPA);
    const requestId = loginRequestId(auth.location);
    const started = await call(server, INITIATE, { request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION' });
    expect(started.status, JSON.stringify(started)).to.equal(200);
    const options = started.data.fido2_options as unknown as PublicKeyCredentialRequestOptionsJSON;
    expect(options.allowCredentials ?? []).to.deep.equal([]);
    expect(options.userVerification).to.equal('required');
    const exchangeId = (started.data.exchange_id as { exchange_id: string }).exchange_id;

    // The same key's assertion, claiming to be bob: the handle does not match the credential's owner.
    const forged = await key.authenticate(options);
    const bobHandle = Buffer.from('not-alice').toString('base64url');
    const tampered = await verify(exchangeId, { ...forged, response: { ...forged.response, userHandle: bobHandle } });
    expect([tampered.status, tampered.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);

    const again = await call(server, INITIATE, { request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION' });
    const fresh = again.data.fido2_options as unknown as PublicKeyCredentialRequestOptionsJSON;
    const verified = await verify(
      (again.data.exchange_id as { exchange_id: string }).exchange_id,
      await key.authenticate(fresh),
    );
    expect(verified.status, JSON.stringify(verified)).to.equal(200);
    expect(verified.data.sub).to.equal(server.alice.id);
    const done = await browser.postForm('/login/continue', {
      requestId,
      status_id: again.data.status_id as string,
      verificationType: 'FIDO2',
    });
    expect(locationOf(done, server).pathname).to.equal('/api/oauth2/authorize/resume');
  });

  it('a malformed response is 401 (nothing spent but the attempt); a missing one 400 FIELD_MISSING', async function () {
    const { exchangeId } = await secondStage();
    const garbage = await call(server, VERIFY, { exchange_id: exchangeId, fido2_client_response: '{not json' });
    expect([garbage.status, garbage.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
    const missing = await call(server, VERIFY, { exchange_id: exchangeId });
    expect([missing.status, missing.code]).to.deep.equal([400, 'FIELD_MISSING']);
  });

  // Last: its refusal would count toward fds-velocity's back-off for the tests after it.
  it("a credential outside the options' allowCredentials (another user's passkey) is refused: 401 VERIFICATION_FAILED", async function () {
    const { id: carol } = await server.gatehouse.container.cradle.users.create({ username: 'carol-fido2' });
    const carols = new SoftAuthenticator({ origin: server.issuer });
    expect((await register(carols, carol, 'Carol key')).status).to.equal(200);
    const { exchangeId, options } = await secondStage();
    expect(options.allowCredentials?.map((c) => c.id)).to.not.include(carols.credentials[0]!.id);
    // A lying client answers alice's sign-in with carol's credential, correctly signed over alice's challenge.
    const foreign = await carols.authenticate(options, { credentialId: carols.credentials[0]!.id });
    const refused = await verify(exchangeId, foreign);
    expect([refused.status, refused.code]).to.deep.equal([401, 'VERIFICATION_FAILED']);
  });
});
