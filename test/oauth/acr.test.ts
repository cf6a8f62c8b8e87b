/**
 * acr_values and step-up (OIDC Core §3.1.2.1, §5.5.1.1): an app maps acr values to login stages;
 * a request asking for a stronger acr than the browser's session met is asked for what is
 * missing; the ID token says which acr the login met.
 */
import { expect } from 'chai';
import {
  ACR_MFA,
  ACR_PWD,
  Browser,
  PASSWORD,
  STEPUP,
  authorizePath,
  basic,
  completeStage,
  decodeJwtParts,
  enrolTotp,
  locationOf,
  loginRequestId,
  pkcePair,
  postForm,
  startServer,
  totpCode,
  type OAuthServer,
  type TestUser,
} from './support.js';

const CALLBACK = 'https://stepup.example.test/cb';

describe('acr_values and step-up', function () {
  let server: OAuthServer;
  let user: TestUser;
  let seed: string;

  before(async function () {
    server = await startServer();
    user = await server.user('acr');
    seed = await enrolTotp(server, user);
  });
  after(() => server?.close());

  const pkce = pkcePair();
  const start = (browser: Browser, extra: Record<string, string> = {}) =>
    browser.get(
      authorizePath({
        response_type: 'code',
        client_id: STEPUP.id,
        redirect_uri: CALLBACK,
        scope: 'openid offline_access',
        state: 'acr',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        ...extra,
      }),
    );
  const password = (browser: Browser, requestId: string) =>
    completeStage(browser, server, requestId, 'PASSWORD', { identifier: user.username }, { password: PASSWORD });
  // Each TOTP login takes the next time step: a step once used is refused (replay protection).
  let step = 0;
  const totp = async (browser: Browser, requestId: string) =>
    completeStage(browser, server, requestId, 'TOTP', { sub: user.id }, { pass_code: await totpCode(seed, step++) });
  /** Follows the resume link to the callback and redeems the code: the ID token's claims. */
  const idTokenAfter = async (browser: Browser, resume: URL) => {
    expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
    return idTokenOf(locationOf(await browser.get(resume.pathname + resume.search), server));
  };
  const idTokenOf = async (callback: URL) => {
    expect(callback.searchParams.get('error'), callback.search).to.equal(null);
    const res = await postForm(
      server,
      '/oauth/token',
      {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: CALLBACK,
        code_verifier: pkce.verifier,
      },
      basic(STEPUP.id, STEPUP.secret),
    );
    expect(res.status, res.text).to.equal(200);
    return { claims: decodeJwtParts(res.body.id_token as string).payload, refresh: res.body.refresh_token as string };
  };

  it('without acr_values: the app’s own stages, and the ID token names the acr they meet', async function () {
    const browser = new Browser(server);
    const login = locationOf(await start(browser), server);
    const { claims } = await idTokenAfter(browser, await password(browser, loginRequestId(login)));
    expect(claims.acr).to.equal(ACR_PWD);
  });

  it('a stronger acr than the session met: the login page asks only for the missing factor (step-up)', async function () {
    const browser = new Browser(server);
    await idTokenAfter(browser, await password(browser, loginRequestId(locationOf(await start(browser), server))));

    // Same browser, signed in with a password: mfa asks for TOTP alone, with the user known.
    const stepUp = locationOf(await start(browser, { acr_values: `urn:unknown ${ACR_MFA}` }), server);
    expect(stepUp.pathname).to.equal('/login');
    const page = await (await browser.get(stepUp.pathname + stepUp.search)).text();
    expect(page).to.include('data-method="TOTP"');
    expect(page).to.not.include('data-method="PASSWORD"');
    const { claims, refresh } = await idTokenAfter(browser, await totp(browser, loginRequestId(stepUp)));
    expect(claims.acr).to.equal(ACR_MFA);
    expect(claims.amr).to.include.members(['pwd', 'otp']);

    // Refreshed ID tokens repeat the acr of the login.
    const refreshed = await postForm(
      server,
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: refresh },
      basic(STEPUP.id, STEPUP.secret),
    );
    expect(decodeJwtParts(refreshed.body.id_token as string).payload.acr).to.equal(ACR_MFA);

    // Now the session meets mfa: single sign-on, no page.
    const sso = locationOf(await start(browser, { acr_values: ACR_MFA, prompt: 'none' }), server);
    expect((await idTokenAfter(browser, sso)).claims.acr).to.equal(ACR_MFA);
  });

  it('prompt=none with a session short of the acr → interaction_required', async function () {
    const browser = new Browser(server);
    await idTokenAfter(browser, await password(browser, loginRequestId(locationOf(await start(browser), server))));
    const res = locationOf(await start(browser, { acr_values: ACR_MFA, prompt: 'none' }), server);
    expect(res.href.split('?')[0]).to.equal(CALLBACK);
    expect(res.searchParams.get('error')).to.equal('interaction_required');
  });

  it('the claims parameter: an essential acr the app offers is a requirement like acr_values', async function () {
    const browser = new Browser(server);
    const claims = JSON.stringify({ id_token: { acr: { essential: true, values: [ACR_MFA] } } });
    const login = locationOf(await start(browser, { claims }), server);
    const requestId = loginRequestId(login);
    const next = await password(browser, requestId);
    expect(loginRequestId(next)).to.equal(requestId);
    expect((await idTokenAfter(browser, await totp(browser, requestId))).claims.acr).to.equal(ACR_MFA);
  });

  it('an essential acr the app does not offer → unmet_authentication_requirements; a voluntary one is ignored', async function () {
    const essential = JSON.stringify({ id_token: { acr: { essential: true, value: 'urn:other:loa:4' } } });
    const refused = locationOf(await start(new Browser(server), { claims: essential }), server);
    expect(refused.searchParams.get('error')).to.equal('unmet_authentication_requirements');
    expect(refused.searchParams.get('state')).to.equal('acr');
    const voluntary = locationOf(await start(new Browser(server), { acr_values: 'urn:other:loa:4' }), server);
    expect(voluntary.pathname).to.equal('/login');
  });

  it('malformed acr_values → invalid_request', async function () {
    const res = locationOf(await start(new Browser(server), { acr_values: 'a\u0001b' }), server);
    expect(res.searchParams.get('error')).to.equal('invalid_request');
  });

  it('discovery lists the acr values the apps offer, and acr among the claims', async function () {
    const meta = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
      string,
      string[]
    >;
    expect(meta.acr_values_supported).to.deep.equal([ACR_PWD, ACR_MFA]);
    expect(meta.claims_supported).to.include('acr');
  });
});
