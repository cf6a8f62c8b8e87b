/**
 * User profile claims (OIDC Core §5.1) stored per user and edited by the admin API, released by
 * scope (§5.4) and by the `claims` parameter (§5.5); request objects refused, never ignored (§6).
 */
import { expect } from 'chai';
import {
  ADMIN_TOKEN,
  Browser,
  WEB,
  WEB_CB,
  authorizePath,
  basic,
  decodeJwtParts,
  locationOf,
  obtainCode,
  postForm,
  redeem,
  startServer,
  type OAuthServer,
  type TestUser,
} from './support.js';

describe('OIDC claims: profile, scopes and the claims parameter', function () {
  let server: OAuthServer;
  let user: TestUser;

  before(async function () {
    server = await startServer();
    user = await server.user('claims');
  });
  after(() => server?.close());

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(server.url(path), {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const profileOf = async (id: string) =>
    (
      (await (await admin('GET', `/admin/users/${id}/profile`)).json()) as {
        data: Record<string, unknown>;
      }
    ).data;
  const userinfo = async (accessToken: string) => {
    const res = await fetch(server.url('/userinfo'), { headers: { Authorization: `Bearer ${accessToken}` } });
    expect(res.status).to.equal(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const tokensFor = async (scope: string, claims?: unknown) => {
    const got = await obtainCode(server, user, {
      scope,
      ...(claims ? { extra: { claims: JSON.stringify(claims) } } : {}),
    });
    const res = await redeem(server, got);
    expect(res.status, res.text).to.equal(200);
    return res.body as { access_token: string; id_token: string; refresh_token?: string };
  };

  describe('the admin API', function () {
    it('sets claims by merge patch: a member sets, null removes, the rest stays; updated_at follows', async function () {
      const first = await admin('PATCH', `/admin/users/${user.id}/profile`, {
        name: 'Alice Liddell',
        given_name: 'Alice',
        family_name: 'Liddell',
        nickname: 'Al',
        locale: 'de-DE',
        zoneinfo: 'Europe/Berlin',
        picture: 'https://pics.example/alice.png',
        address: { locality: 'Oxford', country: 'UK' },
      });
      expect(first.status).to.equal(200);
      const second = await admin('PATCH', `/admin/users/${user.id}/profile`, {
        nickname: null,
        birthdate: '1852-05-04',
      });
      expect(second.status).to.equal(200);
      const profile = await profileOf(user.id);
      expect(profile).to.include({ name: 'Alice Liddell', given_name: 'Alice', birthdate: '1852-05-04' });
      expect(profile).to.not.have.property('nickname');
      expect(profile.updated_at).to.be.a('number');
    });

    const refusals: [string, Record<string, unknown>, string][] = [
      ['an unknown claim', { favourite_colour: 'blue' }, 'favourite_colour'],
      ['a picture that is no http(s) URL', { picture: 'javascript:alert(1)' }, 'picture'],
      ['a made-up time zone', { zoneinfo: 'Mars/Olympus' }, 'zoneinfo'],
      ['a malformed birthdate', { birthdate: '04/05/1852' }, 'birthdate'],
      ['an address member that is not one', { address: { planet: 'Earth' } }, 'address'],
    ];
    for (const [what, patch, field] of refusals) {
      it(`refuses ${what} with 400 INVALID_FIELD and changes nothing`, async function () {
        const before = await profileOf(user.id);
        const res = await admin('PATCH', `/admin/users/${user.id}/profile`, { ...patch, name: 'Changed' });
        expect(res.status).to.equal(400);
        const body = (await res.json()) as { error: { code: string; details?: { field?: string } } };
        expect(body.error.code).to.equal('INVALID_FIELD');
        expect(body.error.details?.field).to.include(field);
        expect(await profileOf(user.id)).to.deep.equal(before);
      });
    }

    it('an unknown user → 404 USER_NOT_FOUND', async function () {
      const res = await admin('PATCH', '/admin/users/nobody/profile', { name: 'X' });
      expect(res.status).to.equal(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('USER_NOT_FOUND');
    });
  });

  describe('userinfo and the ID token', function () {
    it('profile scope: the stored profile claims and preferred_username in userinfo, none in the ID token', async function () {
      const tokens = await tokensFor('openid profile');
      const info = await userinfo(tokens.access_token);
      expect(info).to.include({
        sub: user.id,
        name: 'Alice Liddell',
        given_name: 'Alice',
        family_name: 'Liddell',
        locale: 'de-DE',
        zoneinfo: 'Europe/Berlin',
        preferred_username: user.username,
      });
      expect(info.updated_at).to.be.a('number');
      // address is the address scope's, email the email scope's (OIDC Core §5.4).
      expect(info).to.not.have.any.keys('address', 'email', 'email_verified');
      const { payload } = decodeJwtParts(tokens.id_token);
      expect(payload).to.not.have.any.keys('name', 'given_name', 'email');
    });

    it('the claims parameter: one claim for userinfo without its scope, and claims in the ID token, repeated on refresh', async function () {
      const tokens = await tokensFor('openid offline_access', {
        userinfo: { email: { essential: true } },
        id_token: { name: null, email_verified: { essential: true }, given_name: { value: 'Alice' } },
      });
      const info = await userinfo(tokens.access_token);
      expect(info).to.deep.equal({ sub: user.id, email: user.email });
      const { payload } = decodeJwtParts(tokens.id_token);
      expect(payload).to.include({ name: 'Alice Liddell', given_name: 'Alice', email_verified: false, sub: user.id });

      const refreshed = await postForm(
        server,
        '/oauth/token',
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
        basic(WEB.id, WEB.secret),
      );
      expect(refreshed.status, refreshed.text).to.equal(200);
      expect(decodeJwtParts(refreshed.body.id_token as string).payload).to.include({ name: 'Alice Liddell' });
    });

    it('never releases a claim of a scope the app may not have (phone for the web app), nor unknown claims', async function () {
      const tokens = await tokensFor('openid', {
        userinfo: { phone_number: null, shoe_size: null },
        id_token: { phone_number: { essential: true }, address: null },
      });
      expect(await userinfo(tokens.access_token)).to.deep.equal({ sub: user.id });
      expect(decodeJwtParts(tokens.id_token).payload).to.not.have.any.keys('phone_number', 'address', 'shoe_size');
    });
  });

  describe('refusals at the authorization endpoint (redirected with state)', function () {
    const redirectError = async (extra: Record<string, string>) => {
      const res = await new Browser(server).get(
        authorizePath({
          response_type: 'code',
          client_id: WEB.id,
          redirect_uri: WEB_CB,
          scope: 'openid',
          state: 's1',
          ...extra,
        }),
      );
      expect(res.status).to.equal(303);
      const location = locationOf(res, server);
      expect(location.href.split('?')[0]).to.equal(WEB_CB);
      expect(location.searchParams.get('state')).to.equal('s1');
      return location.searchParams.get('error');
    };

    for (const [what, claims] of [
      ['not JSON', '{userinfo'],
      ['an array', '[]'],
      ['a member that is not an object', '{"userinfo":"email"}'],
      ['essential that is not a boolean', '{"id_token":{"name":{"essential":"yes"}}}'],
      ['values that is not an array', '{"id_token":{"acr":{"values":"x"}}}'],
    ] as const) {
      it(`claims ${what} → invalid_request`, async function () {
        expect(await redirectError({ claims })).to.equal('invalid_request');
      });
    }

    it('a request object → request_not_supported; a request_uri → request_uri_not_supported', async function () {
      expect(await redirectError({ request: 'eyJhbGciOiJub25lIn0.e30.' })).to.equal('request_not_supported');
      expect(await redirectError({ request_uri: 'https://web.example.test/req.jwt' })).to.equal(
        'request_uri_not_supported',
      );
    });
  });

  it('discovery tells the truth: claims_parameter_supported, request objects not, every claim listed', async function () {
    const meta = (await (await fetch(server.url('/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(meta).to.include({
      claims_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    });
    expect(meta.claims_supported).to.include.members([
      'name',
      'given_name',
      'locale',
      'updated_at',
      'email_verified',
      'phone_number_verified',
      'address',
    ]);
  });
});
