/**
 * Decision 80: the FAPI 2.0 Security Profile is the oauth-fapi plugin's, a client policy
 * (`api.clientPolicy`) the core consults where it decides. What the policy answers at each point,
 * without a server; the app key refused without the plugin; the contract's own refusals (a taken
 * name, a policy without `appliesTo`) and `client.policies`. The profile end to end, and every
 * refusal with its status and code, is fapi.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import request from 'supertest';
import {
  BootError,
  buildApp,
  createLogger,
  type ClientPolicy,
  type Gatehouse,
  type OAuthClient,
} from '@gatehouse-auth/core';
import { FAKE_ISSUER, FakeClock, fakeServices, registerWithFakes } from '@gatehouse-auth/testing';
import plugin, { FAPI2_POLICY, FAPI2_SIGNING_ALGS } from '@gatehouse-auth/oauth-fapi';
import { testConfig, withHostedPage } from '../../../test/support/config.js';

const PLUGIN = '@gatehouse-auth/oauth-fapi';
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
const withLogin = (...more: Record<string, unknown>[]) =>
  withHostedPage([
    { name: '@gatehouse-auth/method-password' },
    { name: '@gatehouse-auth/grant-authorization-code' },
    ...more,
  ]);
const EC_KEY = {
  kty: 'EC',
  crv: 'P-256',
  kid: 'k',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
};
const fapiApp = {
  client_id: 'bank',
  security_profile: 'fapi2',
  token_endpoint_auth_method: 'private_key_jwt',
  jwks: { keys: [EC_KEY] },
  redirect_uris: ['https://bank.example.test/cb'],
  login_stages: [['PASSWORD']],
  id_token_signed_response_alg: 'ES256',
};
const plainApp = {
  client_id: 'rp',
  client_secret: 'rp-secret-0123456789abcdef0123456789abcdef',
  redirect_uris: ['https://rp.example.test/cb'],
  login_stages: [['PASSWORD']],
};

async function startupError(plugins: Record<string, unknown>[], apps: Record<string, unknown>[]) {
  try {
    const built = await buildApp(testConfig(withLogin(...plugins), { apps }), { logger: createLogger('silent') });
    await built.close();
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return err as BootError;
  }
  return expect.fail('expected start-up to fail');
}

describe('oauth-fapi: its client policy, without a server', function () {
  const clock = new FakeClock(new Date('2026-01-01T00:00:00Z'));
  const now = Math.floor(clock.now().getTime() / 1000);
  let policy: ClientPolicy;
  const client = (profile?: string) =>
    ({ clientId: 'bank', settings: { security_profile: profile } }) as unknown as OAuthClient;

  before(async () => {
    expect(Object.keys(plugin.appConfig ?? {})).to.deep.equal(['security_profile']);
    const registered = await registerWithFakes(plugin, {}, fakeServices({ clock }));
    expect([...registered.clientPolicies.keys()]).to.deep.equal([FAPI2_POLICY]);
    policy = registered.clientPolicies.get(FAPI2_POLICY)!;
  });

  it('holds the apps that name security_profile: fapi2, and no other', () => {
    expect(policy.appliesTo(client('fapi2'))).to.equal(true);
    expect(policy.appliesTo(client())).to.equal(false);
  });

  it('refuses a request not pushed, one without redirect_uri or PKCE; takes a pushed one with both', () => {
    const c = client('fapi2');
    expect(policy.authorizationRequest!(c, { pushed: false })).to.match(/must push its authorization requests/);
    expect(policy.authorizationRequest!(c, { pushed: true })).to.equal(undefined);
    const request = { response_type: 'code', redirect_uri_sent: true, code_challenge: 'x'.repeat(43) };
    expect(policy.authorizationParameters!(c, request)).to.equal(undefined);
    expect(policy.authorizationParameters!(c, { ...request, redirect_uri_sent: false })).to.equal(
      'The redirect_uri is required for this app (FAPI 2.0).',
    );
    expect(policy.authorizationParameters!(c, { ...request, code_challenge: null })).to.equal(
      'PKCE (code_challenge with S256) is required for this app (FAPI 2.0)',
    );
  });

  it('takes assertions whose aud is the issuer alone and whose iat is at most 30 s ahead; PS256, ES256, EdDSA', () => {
    const c = client('fapi2');
    expect(policy.assertionAlgorithms).to.deep.equal(FAPI2_SIGNING_ALGS);
    expect(policy.clientAssertion!(c, { aud: FAKE_ISSUER, iat: now + 30 }, FAKE_ISSUER)).to.equal(undefined);
    expect(policy.clientAssertion!(c, { aud: [FAKE_ISSUER], iat: now }, FAKE_ISSUER)).to.equal(
      `client_assertion aud must be the issuer ${FAKE_ISSUER}, as a string`,
    );
    expect(policy.clientAssertion!(c, { aud: FAKE_ISSUER, iat: now + 31 }, FAKE_ISSUER)).to.equal(
      'client_assertion iat is in the future',
    );
  });

  it('takes a token request bound by DPoP or a certificate, and refuses a bearer one', () => {
    const c = client('fapi2');
    const grantType = 'authorization_code';
    expect(policy.tokenRequest!(c, { grantType, confirmation: { jkt: 'j' } })).to.equal(undefined);
    expect(policy.tokenRequest!(c, { grantType, confirmation: { 'x5t#S256': 'x' } })).to.equal(undefined);
    expect(policy.tokenRequest!(c, { grantType, confirmation: null })).to.match(/sender-constrained tokens only/);
  });
});

describe('oauth-fapi left out of plugins: (decision 80)', function () {
  it('an app naming security_profile stops start-up, naming the plugin', async () => {
    const err = await startupError(
      [{ name: '@gatehouse-auth/oauth-par' }, { name: '@gatehouse-auth/oauth-dpop' }],
      [fapiApp],
    );
    expect([err.code, err.message]).to.deep.equal([
      'CONFIG_INVALID',
      `apps[0].security_profile: is not a known key (neither the core nor a loaded plugin adds it; the plugin ${PLUGIN} does)`,
    ]);
  });
});

describe('client policies in the core (api.clientPolicy, decision 80)', function () {
  it('lists the policies that hold an app in client.policies', async () => {
    const plugins = [{ name: '@gatehouse-auth/oauth-par' }, { name: '@gatehouse-auth/oauth-dpop' }, { name: PLUGIN }];
    const built = await buildApp(testConfig(withLogin(...plugins), { apps: [fapiApp, plainApp] }), {
      logger: createLogger('silent'),
    });
    try {
      const clients = built.container.cradle.clients;
      expect(clients.get('bank')!.policies).to.deep.equal([FAPI2_POLICY]);
      expect(clients.get('rp')!.policies).to.deep.equal([]);
    } finally {
      await built.close();
    }
  });

  it('a policy name another plugin has stops start-up; so does a policy without appliesTo', async () => {
    const taken = await startupError([{ name: PLUGIN }, { path: fixture('policy'), options: { name: 'fapi2' } }], []);
    expect([taken.code, taken.message]).to.deep.equal([
      'PLUGIN_DUPLICATE_ID',
      `plugin @fixture/client-policy: client policy "fapi2" is already registered by plugin ${PLUGIN}`,
    ]);
    const partial = await startupError([{ path: fixture('policy'), options: { name: 'mine', whole: false } }], []);
    expect([partial.code, partial.message]).to.deep.equal([
      'PLUGIN_INVALID',
      'plugin @fixture/client-policy: client policy "mine" has no appliesTo function',
    ]);
  });
});

describe('oauth-fapi: the audience of a client assertion is the issuer as published', function () {
  this.timeout(60_000);
  // An issuer written with a trailing slash is published (discovery's `issuer`, `iss`) as written:
  // FAPI 2.0 §5.3.2.1 (8) asks for that string, exactly, as the assertion's `aud`.
  const issuer = 'https://id.example.test/';
  let built: Gatehouse;
  let key: CryptoKey;

  before(async () => {
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    const app = { ...fapiApp, jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k' }] } };
    const plugins = [{ name: '@gatehouse-auth/oauth-par' }, { name: '@gatehouse-auth/oauth-dpop' }, { name: PLUGIN }];
    built = await buildApp(testConfig(withLogin(...plugins), { issuer, apps: [app] }), {
      logger: createLogger('silent'),
    });
  });
  after(() => built?.close());

  async function push(aud: string) {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ iss: 'bank', sub: 'bank', aud, jti: randomUUID(), iat: now, exp: now + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .sign(key);
    return request(built.app).post('/oauth/par').type('form').send({
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      response_type: 'code',
      redirect_uri: 'https://bank.example.test/cb',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
  }

  it('takes the issuer discovery publishes, and refuses it without its slash', async () => {
    const discovery = await request(built.app).get('/.well-known/openid-configuration');
    expect(discovery.body.issuer).to.equal(issuer);
    const published = await push(issuer);
    expect(published.status, JSON.stringify(published.body)).to.equal(201);
    const other = await push(issuer.slice(0, -1));
    expect([other.status, other.body]).to.deep.equal([
      401,
      { error: 'invalid_client', error_description: `client_assertion aud must be the issuer ${issuer}, as a string` },
    ]);
  });
});
