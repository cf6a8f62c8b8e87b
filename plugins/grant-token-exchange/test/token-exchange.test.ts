import { expect } from 'chai';
import {
  ACCESS_TOKEN_TYPE,
  ID_TOKEN_TYPE,
  JWT_TOKEN_TYPE,
  REFRESH_TOKEN_TYPE,
  type GrantHandler,
  type JsonObject,
  type OAuthClient,
} from '@gatehouse-auth/core';
import {
  fakeClient,
  fakeOAuth,
  fakeServices,
  grantContext,
  registerWithFakes,
  type FakeOAuth,
  expectOAuthError,
} from '@gatehouse-auth/testing';
import plugin, { FILE_SCOPES, TOKEN_EXCHANGE } from '../src/index.js';
import { resourceObjectsConfig } from '../src/targets.js';

const FILE = 'https://files.example.test/file/1';
/** Resources that stand for one file each (`resource_objects`). */
const DOC = 'https://files.example.test/2.0/files/123';
const DOC_OBJECT = { type: 'file', id: '123', name: 'Contract.pdf', etag: '3' };
const SHEET = 'https://files.example.test/2.0/files/456';
const SHEET_OBJECT = { type: 'file', id: '456' };
const SCOPE = ['item_preview', 'item_download', 'annotation_edit'];
const ACTOR_ID_TOKEN = 'actor-id-token';
const SUBJECT_FAILURE = 'the subject_token is invalid, inactive, or not issued to or for this client';

interface Setup {
  oauth: FakeOAuth;
  handler: GrantHandler;
  client: OAuthClient;
  /** An access token issued to `client` for user-1 with SCOPE. */
  subjectToken: string;
  /** What verifyOwnJwt answers per token; unknown tokens verify to null. */
  jwts: Map<string, JsonObject>;
}

async function setup(): Promise<Setup> {
  const services = fakeServices();
  const jwts = new Map<string, JsonObject>([
    [ACTOR_ID_TOKEN, { iss: 'https://issuer.example.test', sub: 'user-2', aud: 'client-a', azp: 'client-a' }],
  ]);
  const oauth = fakeOAuth({
    clock: services.clock,
    verifyOwnJwt: async (token) => jwts.get(token) ?? null,
    users: [
      { identifier: 'alice', userId: 'user-1', password: 'unused' },
      { identifier: 'bob', userId: 'user-2', password: 'unused' },
      { identifier: 'carol', userId: 'user-3', password: 'unused', status: 'disabled' },
    ],
  });
  const client = fakeClient({
    grantTypes: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
    settings: {
      audiences: [FILE, 'annotations'],
      resource_objects: [
        { resource: DOC, object: DOC_OBJECT },
        { resource: SHEET, object: SHEET_OBJECT },
      ],
    },
  });
  const { grants } = await registerWithFakes(plugin, {}, services);
  const { access_token } = await oauth.issue({
    client,
    subject: 'user-1',
    scope: SCOPE,
    grantType: 'authorization_code',
  });
  oauth.issued.length = 0;
  return { oauth, handler: grants[0]!, client, subjectToken: access_token, jwts };
}

function exchange(s: Setup, params: Record<string, string | undefined>, client: OAuthClient = s.client) {
  return s.handler.handle(
    grantContext({
      client,
      oauth: s.oauth,
      params: { subject_token: s.subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, ...params },
    }),
  );
}

/** A failure must issue nothing. */
async function expectRefused(s: Setup, params: Record<string, string | undefined>, code: string, status = 400) {
  await expectOAuthError(exchange(s, params), code, status);
  expect(s.oauth.issued).to.deep.equal([]);
}

const grantIdOf = (s: Setup, token: string) => s.oauth.tokenRow(token)!.grantId;

describe('@gatehouse-auth/grant-token-exchange', () => {
  it('registers one handler for the token-exchange grant with the RFC 8693 parameters', async () => {
    const { handler } = await setup();
    expect(handler.grantType).to.equal('urn:ietf:params:oauth:grant-type:token-exchange');
    expect(handler.parameters).to.deep.equal([
      'subject_token',
      'subject_token_type',
      'actor_token',
      'actor_token_type',
      'resource',
      'audience',
      'scope',
      'requested_token_type',
    ]);
  });

  it('refuses options', async () => {
    let error: unknown;
    await registerWithFakes(plugin, { lifetime: 60 }).catch((err: unknown) => (error = err));
    expect(error).to.be.instanceOf(Error);
  });

  describe('success', () => {
    it('by default keeps the scope and subject, joins the subject grant, issues no refresh token', async () => {
      const s = await setup();
      const response = await exchange(s, {});
      expect(s.oauth.issued).to.deep.equal([
        {
          client: s.client,
          subject: 'user-1',
          scope: SCOPE,
          grantType: TOKEN_EXCHANGE,
          grantId: grantIdOf(s, s.subjectToken),
          // Revoking the subject token revokes the exchanged one.
          derivedFrom: s.oauth.tokenRow(s.subjectToken)!.key,
          refreshToken: false,
          // Bounded by the subject token's remaining life; an exchange issues no ID token.
          accessTokenTtl: s.oauth.issued[0]!.accessTokenTtl,
          withoutIdToken: true,
          claims: {},
        },
      ]);
      expect(s.oauth.issued[0]!.accessTokenTtl).to.be.a('number').and.be.at.least(1);
      expect(response.issued_token_type).to.equal(ACCESS_TOKEN_TYPE);
      expect(response.token_type).to.equal('bearer');
      expect(response.scope).to.equal(SCOPE.join(' '));
      expect(response).to.not.have.property('refresh_token');
      const row = s.oauth.tokenRow(response.access_token)!;
      expect({ kind: row.kind, clientId: row.clientId, subject: row.subject }).to.deep.equal({
        kind: 'access',
        clientId: 'client-a',
        subject: 'user-1',
      });
      expect((await s.oauth.inspect(response.access_token)).active).to.equal(true);
      // The subject token stays usable: an exchange does not consume it.
      expect((await s.oauth.inspect(s.subjectToken)).active).to.equal(true);
    });

    it('down-scopes and sets aud to the requested resource and audience', async () => {
      const s = await setup();
      const response = await exchange(s, {
        scope: 'item_preview annotation_edit',
        resource: FILE,
        audience: 'annotations',
        requested_token_type: ACCESS_TOKEN_TYPE,
      });
      expect(s.oauth.issued).to.have.length(1);
      expect(s.oauth.issued[0]!.scope).to.deep.equal(['item_preview', 'annotation_edit']);
      expect(s.oauth.issued[0]!.audience).to.deep.equal([FILE, 'annotations']);
      expect(response.scope).to.equal('item_preview annotation_edit');
    });

    it('a resource alone becomes the only audience', async () => {
      const s = await setup();
      await exchange(s, { resource: FILE });
      expect(s.oauth.issued[0]!.audience).to.deep.equal([FILE]);
    });

    it('an actor ID token makes an annotator token: act = { sub } of the actor', async () => {
      const s = await setup();
      await exchange(s, { actor_token: ACTOR_ID_TOKEN, actor_token_type: ID_TOKEN_TYPE, scope: 'annotation_edit' });
      expect(s.oauth.issued).to.have.length(1);
      expect(s.oauth.issued[0]!.claims).to.deep.equal({ act: { sub: 'user-2' } });
      expect(s.oauth.issued[0]!.subject).to.equal('user-1');
      expect(s.oauth.issued[0]!.scope).to.deep.equal(['annotation_edit']);
    });

    it('an actor ID token whose aud is a list naming the client is accepted', async () => {
      const s = await setup();
      s.jwts.set('listed', { sub: 'user-2', aud: ['other', 'client-a'] });
      await exchange(s, { actor_token: 'listed', actor_token_type: ID_TOKEN_TYPE });
      expect(s.oauth.issued[0]!.claims).to.deep.equal({ act: { sub: 'user-2' } });
    });

    it('keeps an earlier actor chain: nested under a new actor, or alone', async () => {
      const s = await setup();
      const { access_token } = await s.oauth.issue({
        client: s.client,
        subject: 'user-1',
        scope: SCOPE,
        grantType: TOKEN_EXCHANGE,
        claims: { act: { sub: 'service-x' } },
      });
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      await exchange(s, { actor_token: ACTOR_ID_TOKEN, actor_token_type: ID_TOKEN_TYPE });
      await exchange(s, {});
      expect(s.oauth.issued.map((i) => i.claims)).to.deep.equal([
        { act: { sub: 'user-2', act: { sub: 'service-x' } } },
        { act: { sub: 'service-x' } },
      ]);
    });

    it('keeps the service subject of a client-credentials token', async () => {
      const s = await setup();
      const { access_token } = await s.oauth.issue({
        client: s.client,
        subject: null,
        scope: SCOPE,
        grantType: 'client_credentials',
        claims: { service_subject_type: 'enterprise', service_subject_id: 'ent-1' },
      });
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      await exchange(s, { scope: 'item_preview' });
      expect(s.oauth.issued[0]!.subject).to.equal(null);
      expect(s.oauth.issued[0]!.claims).to.deep.equal({
        service_subject_type: 'enterprise',
        service_subject_id: 'ent-1',
      });
    });

    it('the new token never outlives the subject token', async () => {
      const s = await setup();
      s.oauth.clock.advance(3000);
      const response = await exchange(s, {});
      expect(s.oauth.issued[0]!.accessTokenTtl).to.equal(600);
      expect(response.expires_in).to.equal(600);
      s.oauth.clock.advance(600);
      expect((await s.oauth.inspect(response.access_token)).active).to.equal(false);
    });

    it('revoking the subject grant ends the exchanged token too', async () => {
      const s = await setup();
      const response = await exchange(s, {});
      await s.oauth.grants.revoke(grantIdOf(s, s.subjectToken), 'logout');
      expect((await s.oauth.inspect(response.access_token)).active).to.equal(false);
    });

    it('exchanges another client token that names this client in aud', async () => {
      const s = await setup();
      const other = fakeClient({ clientId: 'client-b' });
      const { access_token } = await s.oauth.issue({
        client: other,
        subject: 'user-1',
        scope: SCOPE,
        grantType: 'authorization_code',
      });
      // The core stores the token's aud in its data; the fake does not, so set it as the core would.
      s.oauth.tokenRows.get(s.oauth.tokenRow(access_token)!.key)!.data.aud = ['client-b', 'client-a'];
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      const response = await exchange(s, { scope: 'item_preview' });
      expect(s.oauth.issued[0]!.client.clientId).to.equal('client-a');
      expect(s.oauth.issued[0]!.subject).to.equal('user-1');
      expect(s.oauth.tokenRow(response.access_token)!.clientId).to.equal('client-a');
    });
  });

  describe('request parameters → invalid_request (400)', () => {
    const cases: [string, Record<string, string | undefined>][] = [
      ['no subject_token', { subject_token: undefined }],
      ['no subject_token_type', { subject_token_type: undefined }],
      ['subject_token_type jwt', { subject_token_type: JWT_TOKEN_TYPE }],
      ['subject_token_type refresh_token', { subject_token_type: REFRESH_TOKEN_TYPE }],
      ['subject_token_type id_token', { subject_token_type: ID_TOKEN_TYPE }],
      ['actor_token without actor_token_type', { actor_token: ACTOR_ID_TOKEN }],
      ['actor_token_type without actor_token', { actor_token_type: ID_TOKEN_TYPE }],
      ['actor_token_type access_token', { actor_token: ACTOR_ID_TOKEN, actor_token_type: ACCESS_TOKEN_TYPE }],
      ['requested_token_type refresh_token', { requested_token_type: REFRESH_TOKEN_TYPE }],
      ['requested_token_type id_token', { requested_token_type: ID_TOKEN_TYPE }],
    ];
    for (const [name, params] of cases) {
      it(name, async () => expectRefused(await setup(), params, 'invalid_request'));
    }
  });

  describe('targets → invalid_target (400)', () => {
    const cases: [string, Record<string, string>][] = [
      ['a resource not in audiences', { resource: 'https://files.example.test/file/2' }],
      ['a resource differing only by a trailing slash', { resource: `${FILE}/` }],
      ['an audience not in audiences', { audience: 'billing' }],
      ['an allowed resource with a disallowed audience', { resource: FILE, audience: 'billing' }],
      ['an audience that is only a listed resource prefix', { audience: 'https://files.example.test' }],
    ];
    for (const [name, params] of cases) {
      it(name, async () => expectRefused(await setup(), params, 'invalid_target'));
    }

    // Listed in the client's audiences, so only the URI check can refuse them (RFC 8707 §2).
    for (const [name, resource] of [
      ['a relative resource', '/file/1'],
      ['a resource with a fragment', `${FILE}#page`],
      ['a resource that is not a URI', 'file 1'],
    ] as const) {
      it(`${name}, even if listed`, async () => {
        const s = await setup();
        const client = {
          ...s.client,
          settings: { audiences: [...(s.client.settings.audiences as string[]), resource] },
        };
        await expectOAuthError(
          exchange(s, { resource }, client),
          'invalid_target',
          400,
          'resource must be an absolute URI without a fragment',
        );
        expect(s.oauth.issued).to.deep.equal([]);
      });
    }

    it('a listed audience needs no URI form', async () => {
      const s = await setup();
      const client = { ...s.client, settings: { audiences: ['file 1'] } };
      await exchange(s, { audience: 'file 1' }, client);
      expect(s.oauth.issued[0]!.audience).to.deep.equal(['file 1']);
    });

    it('a client with no audiences may not name any target', async () => {
      const s = await setup();
      await expectOAuthError(
        exchange(s, { audience: 'annotations' }, { ...s.client, settings: { audiences: [] } }),
        'invalid_target',
        400,
      );
      expect(s.oauth.issued).to.deep.equal([]);
    });
  });

  describe('subject_token → invalid_request (400), one description for every case', () => {
    async function expectBadSubject(s: Setup) {
      await expectOAuthError(exchange(s, {}), 'invalid_request', 400, SUBJECT_FAILURE);
      expect(s.oauth.issued).to.deep.equal([]);
    }

    it('unknown', async () => {
      const s = await setup();
      s.subjectToken = 'not-a-token';
      await expectBadSubject(s);
    });

    it('bound to a key (DPoP), exchanged by its own client without a proof of that key', async () => {
      const s = await setup();
      s.oauth.tokenRows.get(s.oauth.tokenRow(s.subjectToken)!.key)!.data.cnf = { jkt: 'key-1' };
      await expectBadSubject(s);
      s.oauth.proofKey = 'key-2';
      await expectBadSubject(s);
      s.oauth.proofKey = 'key-1';
      await exchange(s, {});
      expect(s.oauth.issued).to.have.length(1);
    });

    it('a refresh token', async () => {
      const s = await setup();
      const { refresh_token } = await s.oauth.issue({
        client: s.client,
        subject: 'user-1',
        scope: SCOPE,
        grantType: 'authorization_code',
        refreshToken: true,
      });
      s.oauth.issued.length = 0;
      s.subjectToken = refresh_token!;
      await expectBadSubject(s);
    });

    it('expired', async () => {
      const s = await setup();
      s.oauth.clock.advance(3600);
      await expectBadSubject(s);
    });

    it('with less than a second left', async () => {
      const s = await setup();
      s.oauth.clock.advance(3599.5);
      await expectBadSubject(s);
    });

    it('revoked with its grant', async () => {
      const s = await setup();
      await s.oauth.grants.revoke(grantIdOf(s, s.subjectToken), 'logout');
      await expectBadSubject(s);
    });

    it('issued to another client that does not name this one in aud', async () => {
      const s = await setup();
      const { access_token } = await s.oauth.issue({
        client: fakeClient({ clientId: 'client-b' }),
        subject: 'user-1',
        scope: SCOPE,
        grantType: 'authorization_code',
      });
      s.oauth.tokenRows.get(s.oauth.tokenRow(access_token)!.key)!.data.aud = ['client-b'];
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      await expectBadSubject(s);
    });

    it("another client's own token (no subject), even naming this client in aud", async () => {
      const s = await setup();
      const { access_token } = await s.oauth.issue({
        client: fakeClient({ clientId: 'client-b' }),
        subject: null,
        scope: SCOPE,
        grantType: 'client_credentials',
      });
      s.oauth.tokenRows.get(s.oauth.tokenRow(access_token)!.key)!.data.aud = 'client-a';
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      await expectBadSubject(s);
    });

    it('of a user who is disabled', async () => {
      const s = await setup();
      const { access_token } = await s.oauth.issue({
        client: s.client,
        subject: 'user-3',
        scope: SCOPE,
        grantType: 'authorization_code',
      });
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      await expectBadSubject(s);
    });

    it('of a user who no longer exists', async () => {
      const s = await setup();
      const { access_token } = await s.oauth.issue({
        client: s.client,
        subject: 'user-gone',
        scope: SCOPE,
        grantType: 'authorization_code',
      });
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
      await expectBadSubject(s);
    });
  });

  describe('actor_token → invalid_request (400)', () => {
    const actor = (token: string) => ({ actor_token: token, actor_token_type: ID_TOKEN_TYPE });
    const cases: [string, JsonObject | null][] = [
      ['does not verify (not ours, bad signature, expired)', null],
      [
        'a JWT access token (client_id and scope)',
        { sub: 'user-2', aud: 'client-a', client_id: 'client-a', scope: 'x' },
      ],
      ['an ID token for another client', { sub: 'user-2', aud: 'client-b' }],
      ['an ID token with no aud', { sub: 'user-2' }],
      ['an ID token without sub', { aud: 'client-a' }],
      ['an ID token with an empty sub', { sub: '', aud: 'client-a' }],
      ['an ID token of a disabled user', { sub: 'user-3', aud: 'client-a' }],
      ['an ID token of an unknown user', { sub: 'user-gone', aud: 'client-a' }],
    ];
    for (const [name, claims] of cases) {
      it(name, async () => {
        const s = await setup();
        if (claims) s.jwts.set('scripted', claims);
        await expectOAuthError(exchange(s, actor('scripted')), 'invalid_request', 400, 'the actor_token is invalid');
        expect(s.oauth.issued).to.deep.equal([]);
      });
    }
  });

  describe('scope → invalid_scope', () => {
    it('a scope the subject token lacks → 401', async () => {
      const s = await setup();
      await expectRefused(s, { scope: 'item_preview item_delete' }, 'invalid_scope', 401);
    });

    it('a scope the subject token lacks, with an actor → 401', async () => {
      const s = await setup();
      await expectRefused(
        s,
        { scope: 'base_upload', actor_token: ACTOR_ID_TOKEN, actor_token_type: ID_TOKEN_TYPE },
        'invalid_scope',
        401,
      );
    });

    it('a malformed scope → 400', async () => {
      const s = await setup();
      await expectRefused(s, { scope: 'item_preview "x"' }, 'invalid_scope', 400);
    });

    it('a scope of blanks → 400', async () => {
      const s = await setup();
      await expectRefused(s, { scope: '   ' }, 'invalid_scope', 400);
    });
  });

  describe('restricted_to: narrowing to resource objects', () => {
    /** Makes a token of the client for user-1 with this scope (and claims) the subject token. */
    async function useSubject(s: Setup, scope: string[], claims: JsonObject = {}) {
      const { access_token } = await s.oauth.issue({
        client: s.client,
        subject: 'user-1',
        scope,
        grantType: 'authorization_code',
        claims,
      });
      s.oauth.issued.length = 0;
      s.subjectToken = access_token;
    }

    /** Exchanges, then makes the new (restricted) token the subject token. */
    async function narrowSubject(s: Setup, params: Record<string, string>) {
      const response = await exchange(s, params);
      s.oauth.issued.length = 0;
      s.subjectToken = response.access_token;
      return response;
    }

    const restrictedTo = (objects: JsonObject[], scopes: string[]) =>
      objects.flatMap((object) => scopes.map((scope) => ({ object, scope })));

    it('a resource naming an object: one entry per file scope, in the response, the token and introspection', async () => {
      const s = await setup();
      const response = await exchange(s, { resource: DOC, scope: 'item_preview item_download' });
      const expected = restrictedTo([DOC_OBJECT], ['item_preview', 'item_download']);
      expect(response.restricted_to).to.deep.equal(expected);
      expect(response.scope).to.equal('item_preview item_download');
      expect(s.oauth.issued[0]!.audience).to.deep.equal([DOC]);
      // As a claim, the core stores it with the token and puts it in a JWT access token.
      expect(s.oauth.issued[0]!.claims).to.deep.equal({ restricted_to: expected });
      const row = s.oauth.tokenRow(response.access_token)!;
      expect(s.handler.introspectionClaims!(row)).to.deep.equal({ restricted_to: expected });
    });

    it('without scope: the file scopes the subject token holds, and no other', async () => {
      const s = await setup();
      await useSubject(s, ['openid', 'profile', 'item_preview', 'item_share']);
      const response = await exchange(s, { resource: DOC });
      expect(response.scope).to.equal('item_preview item_share');
      expect(response.restricted_to).to.deep.equal(restrictedTo([DOC_OBJECT], ['item_preview', 'item_share']));
    });

    it('resource and audience naming two objects: object by object, then scope by scope', async () => {
      const s = await setup();
      const response = await exchange(s, { resource: DOC, audience: SHEET, scope: 'item_preview annotation_edit' });
      expect(response.restricted_to).to.deep.equal(
        restrictedTo([DOC_OBJECT, SHEET_OBJECT], ['item_preview', 'annotation_edit']),
      );
      expect(s.oauth.issued[0]!.audience).to.deep.equal([DOC, SHEET]);
    });

    it('an object and a plain audience: restricted to the object, aud names both', async () => {
      const s = await setup();
      const response = await exchange(s, { resource: DOC, audience: 'annotations', scope: 'annotation_edit' });
      expect(response.restricted_to).to.deep.equal(restrictedTo([DOC_OBJECT], ['annotation_edit']));
      expect(s.oauth.issued[0]!.audience).to.deep.equal([DOC, 'annotations']);
    });

    it('two resources for the same object make one object', async () => {
      const s = await setup();
      const alias = 'https://files.example.test/2.0/files/123/content';
      const objects = [
        ...(s.client.settings.resource_objects as JsonObject[]),
        { resource: alias, object: DOC_OBJECT },
      ];
      const client = { ...s.client, settings: { ...s.client.settings, resource_objects: objects } };
      const response = await exchange(s, { resource: DOC, audience: alias, scope: 'item_preview' }, client);
      expect(response.restricted_to).to.deep.equal(restrictedTo([DOC_OBJECT], ['item_preview']));
    });

    it('keeps the actor beside the restriction', async () => {
      const s = await setup();
      await exchange(s, {
        resource: DOC,
        scope: 'annotation_edit',
        actor_token: ACTOR_ID_TOKEN,
        actor_token_type: ID_TOKEN_TYPE,
      });
      expect(s.oauth.issued[0]!.claims).to.deep.equal({
        act: { sub: 'user-2' },
        restricted_to: restrictedTo([DOC_OBJECT], ['annotation_edit']),
      });
    });

    it('no object named: no restricted_to, and introspection adds nothing', async () => {
      const s = await setup();
      const response = await exchange(s, { resource: FILE, scope: 'item_preview' });
      expect(response).to.not.have.property('restricted_to');
      expect(s.handler.introspectionClaims!(s.oauth.tokenRow(response.access_token)!)).to.deep.equal({});
    });

    it('a restricted token exchanged again keeps its objects, narrowed to the scope asked for', async () => {
      const s = await setup();
      await narrowSubject(s, { resource: DOC, audience: SHEET, scope: 'item_preview item_download' });
      const again = await exchange(s, { scope: 'item_preview' });
      expect(again.restricted_to).to.deep.equal(restrictedTo([DOC_OBJECT, SHEET_OBJECT], ['item_preview']));
      const plain = await exchange(s, { audience: 'annotations' });
      expect(plain.restricted_to).to.deep.equal(
        restrictedTo([DOC_OBJECT, SHEET_OBJECT], ['item_preview', 'item_download']),
      );
      const fewer = await exchange(s, { resource: SHEET, scope: 'item_download' });
      expect(fewer.restricted_to).to.deep.equal(restrictedTo([SHEET_OBJECT], ['item_download']));
    });

    describe('failures, nothing issued', () => {
      it('an object the app does not list → 400 invalid_target', async () => {
        const s = await setup();
        await expectRefused(s, { resource: 'https://files.example.test/2.0/files/999' }, 'invalid_target');
      });

      it('a scope that is no file scope → 400 invalid_scope, even one the subject token holds', async () => {
        const s = await setup();
        await useSubject(s, ['openid', 'item_preview']);
        await expectRefused(s, { resource: DOC, scope: 'item_preview openid' }, 'invalid_scope', 400);
      });

      it('a scope that is no file scope beside a file scope the subject lacks → 400 (checked first)', async () => {
        const s = await setup();
        await expectRefused(s, { resource: DOC, scope: 'item_delete profile' }, 'invalid_scope', 400);
      });

      it('a file scope the subject token lacks → 401 invalid_scope', async () => {
        const s = await setup();
        await expectRefused(s, { resource: DOC, scope: 'item_preview item_delete' }, 'invalid_scope', 401);
      });

      it('no scope, and the subject token holds no file scope → 401 invalid_scope', async () => {
        const s = await setup();
        await useSubject(s, ['openid', 'profile']);
        await expectRefused(s, { resource: DOC }, 'invalid_scope', 401);
      });

      it('re-exchange naming another object → 400 invalid_target', async () => {
        const s = await setup();
        await narrowSubject(s, { resource: DOC, scope: 'item_preview' });
        await expectRefused(s, { resource: SHEET, scope: 'item_preview' }, 'invalid_target');
      });

      it('re-exchange adding an object to its own → 400 invalid_target', async () => {
        const s = await setup();
        await narrowSubject(s, { resource: DOC, scope: 'item_preview' });
        await expectRefused(s, { resource: DOC, audience: SHEET }, 'invalid_target');
      });

      it('re-exchange asking for a file scope it was narrowed away from → 401 invalid_scope', async () => {
        const s = await setup();
        await narrowSubject(s, { resource: DOC, scope: 'item_preview' });
        await expectRefused(s, { scope: 'item_preview item_download' }, 'invalid_scope', 401);
      });

      it('re-exchange with a plain audience still allows file scopes only → 400 invalid_scope', async () => {
        const s = await setup();
        await useSubject(s, ['openid', 'item_preview']);
        await narrowSubject(s, { resource: DOC, scope: 'item_preview' });
        await expectRefused(s, { audience: 'annotations', scope: 'openid' }, 'invalid_scope', 400);
      });

      it('a subject token restricted to nothing never yields an unrestricted token → 400 invalid_target', async () => {
        const s = await setup();
        await useSubject(s, ['item_preview'], { restricted_to: [] });
        await expectRefused(s, {}, 'invalid_target');
      });
    });

    describe('apps[i].resource_objects', () => {
      const parse = (value: unknown) => resourceObjectsConfig.safeParse(value);
      const firstIssue = (value: unknown) => {
        const result = parse(value);
        expect(result.success).to.equal(false);
        const issue = result.error!.issues[0]!;
        return { path: issue.path, message: issue.message };
      };

      it('defaults to none and keeps a file object (mini) as given', () => {
        expect(parse(undefined).data).to.deep.equal([]);
        const list = [
          { resource: DOC, object: DOC_OBJECT },
          { resource: SHEET, object: SHEET_OBJECT },
        ];
        expect(parse(list).data).to.deep.equal(list);
      });

      it('refuses a resource that is relative or has a fragment', () => {
        for (const resource of ['/2.0/files/123', `${DOC}#page`]) {
          expect(firstIssue([{ resource, object: DOC_OBJECT }])).to.deep.equal({
            path: [0, 'resource'],
            message: 'must be an absolute URI without a fragment',
          });
        }
      });

      it('refuses a resource listed twice', () => {
        expect(
          firstIssue([
            { resource: DOC, object: DOC_OBJECT },
            { resource: DOC, object: SHEET_OBJECT },
          ]),
        ).to.deep.equal({ path: [1, 'resource'], message: 'is listed twice' });
      });

      it('refuses a numeric id, another object type and an unknown member', () => {
        expect(firstIssue([{ resource: DOC, object: { type: 'file', id: 123 } }]).path).to.deep.equal([
          0,
          'object',
          'id',
        ]);
        expect(firstIssue([{ resource: DOC, object: { type: 'folder', id: '1' } }]).path).to.deep.equal([
          0,
          'object',
          'type',
        ]);
        expect(firstIssue([{ resource: DOC, object: { type: 'file', id: '1', owner: 'x' } }]).path).to.deep.equal([
          0,
          'object',
        ]);
      });
    });

    it('the file scopes are the spec list', () => {
      expect([...FILE_SCOPES].sort()).to.deep.equal([
        'annotation_edit',
        'annotation_view_all',
        'annotation_view_self',
        'base_explorer',
        'base_picker',
        'base_preview',
        'base_upload',
        'item_delete',
        'item_download',
        'item_preview',
        'item_rename',
        'item_share',
      ]);
    });
  });
});
