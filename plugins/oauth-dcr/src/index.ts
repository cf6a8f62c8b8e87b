import {
  definePlugin,
  OAuthError,
  routeInput,
  z,
  type Actor,
  type ClientAdmin,
  type JsonObject,
} from '@gatehouse-auth/core';
import type { NextFunction, Request, Response } from 'express';
import { DCR_ROUTES } from './routes.js';
import { SERVER_FIELDS, storeRefusal, toEntry, toMetadata, type Policy } from './metadata.js';

export { toEntry, toMetadata } from './metadata.js';
export { DCR_ROUTES } from './routes.js';

/** Where the endpoint mounts (RFC 7591 §3); the client configuration endpoint is `{mount}/{client_id}`. */
export const ENDPOINT_MOUNT = '/oauth/register';
/** The admin route minting initial access tokens (behind the admin token). */
export const TOKENS_MOUNT = '/admin/registration-tokens';

const digest = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url SHA-256 digest (43 characters)');
const limitOf = (max: number, window: number) =>
  z
    .strictObject({
      max: z.number().int().min(1).default(max),
      window_seconds: z.number().int().min(1).default(window),
    })
    .default({ max, window_seconds: window });

export const dcrOptions = z
  .strictObject({
    /** RFC 7591 §3: registering needs one of these bearer tokens, given as SHA-256 digests (base64url). */
    initial_access_tokens_sha256: z.array(digest).default([]),
    /** Anyone may register without an initial access token: for development only. */
    open_registration: z.boolean().default(false),
    /** The scopes a registered client may ask for (and gets when it names none). */
    allowed_scopes: z.array(z.string().min(1)).min(1).default(['openid', 'profile', 'email', 'offline_access']),
    /** The grant types a registered client may ask for. */
    allowed_grant_types: z
      .array(z.enum(['authorization_code', 'refresh_token', 'client_credentials']))
      .min(1)
      .default(['authorization_code', 'refresh_token']),
    /** The login stages of every registered client (the app key `login_stages`). */
    login_stages: z
      .array(z.array(z.string().min(1)).min(1))
      .min(1)
      .default([['PASSWORD']]),
    /** Registered clients' ids start with this, so that admins tell them apart. */
    client_id_prefix: z
      .string()
      .regex(/^[\x21-\x7e]{0,20}$/)
      .default('dcr-'),
    /**
     * Whether registered clients may give a `jwks_uri` (https only). Off by default: the server
     * fetches it, so anyone who may register could make it request an address of their choice.
     */
    allow_jwks_uri: z.boolean().default(false),
    /** Registrations per address and window (then 429). */
    registrations: limitOf(20, 3600),
    /** Calls of the client configuration endpoint per address and window (then 429). */
    management: limitOf(120, 60),
  })
  .default({
    initial_access_tokens_sha256: [],
    open_registration: false,
    allowed_scopes: ['openid', 'profile', 'email', 'offline_access'],
    allowed_grant_types: ['authorization_code', 'refresh_token'],
    login_stages: [['PASSWORD']],
    client_id_prefix: 'dcr-',
    allow_jwks_uri: false,
    registrations: { max: 20, window_seconds: 3600 },
    management: { max: 120, window_seconds: 60 },
  });

/** What the plugin keeps of a client it registered (`client:<client_id>`). */
interface Registration extends JsonObject {
  /** SHA-256 of the registration access token. */
  token_sha256: string;
  /** SHA-256 of the client secret (to check one sent with an update, RFC 7592 §2.2). */
  secret_sha256: string | null;
  issued_at: number;
  /** The app's `created_at`: an app made again later with the id (by an admin) is not this one. */
  app_created_at: string | null;
  info: JsonObject;
}

const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** The bearer token of the request, or null. */
function bearerOf(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header.trim());
  return match ? match[1]! : null;
}

/**
 * @gatehouse-auth/oauth-dcr: OAuth 2.0 Dynamic Client Registration (RFC 7591) and its management
 * API (RFC 7592), on the core's client store (`clientAdmin`, decision 0051). Off unless loaded;
 * registering needs an initial access token unless `open_registration` (development). Registered
 * clients get only the allowed scopes and grant types, the configured login stages, and always
 * ask for consent; their ids start with `client_id_prefix`. The configuration endpoint manages
 * only the clients this plugin registered.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-dcr'
 *     options:
 *       initial_access_tokens_sha256: ['<base64url SHA-256 of the token>']
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-dcr',
  apiVersion: '^1.3',
  // clientAdmin is that plugin's (decision 0063); every app it registers asks consent (decision 75).
  dependencies: ['@gatehouse-auth/management', '@gatehouse-auth/page-consent'],
  options: dcrOptions,
  register(api, options) {
    const { web, services, records } = api;
    const { crypto } = services;
    const apps = () => services.resolve<ClientAdmin>('clientAdmin');
    const policy: Policy = {
      allowedScopes: options.allowed_scopes,
      allowedGrantTypes: options.allowed_grant_types,
      loginStages: options.login_stages,
      clientIdPrefix: options.client_id_prefix,
      allowJwksUri: options.allow_jwks_uri,
    };
    const registrations = web.limit('register', options.registrations.max, options.registrations.window_seconds);
    const management = web.limit('manage', options.management.max, options.management.window_seconds);
    const actor = (req: Request, who: string): Actor => ({ via: 'oauth-dcr', userId: who, ip: web.clientIp(req) });
    const configurationUri = (clientId: string) => web.url(`${ENDPOINT_MOUNT}/${encodeURIComponent(clientId)}`);

    async function throttle(limit: typeof registrations, req: Request): Promise<void> {
      const wait = await limit.hit(web.clientIp(req) ?? 'unknown');
      if (wait)
        throw new OAuthError('temporarily_unavailable', 'too many requests; retry later', 429, {
          'Retry-After': String(wait),
        });
    }

    /** RFC 7591 §3: the initial access token, from the options or minted by an admin (single use consumed). */
    /**
     * RFC 7591 §3: the initial access token, from the options or minted by an admin. Checked
     * before the body is read; a single-use one is taken (`use`) only once the metadata passed.
     */
    async function initialToken(req: Request): Promise<{ use(): Promise<void> }> {
      const refused = new OAuthError('invalid_token', 'a valid initial access token is needed to register', 401);
      const kept = { use: async () => undefined };
      if (options.open_registration) return kept;
      const token = bearerOf(req);
      if (!token) throw refused;
      const hash = crypto.sha256(token);
      let known = false;
      for (const d of options.initial_access_tokens_sha256) known = crypto.safeEqual(hash, d) || known;
      if (known) return kept;
      const key = `iat:${hash}`;
      const record = await records.get(key);
      if (!record) throw refused;
      if (record.data.single !== true) return kept;
      return {
        // Exactly one of racing registrations gets it, on every node.
        use: async () => {
          if (!(await records.consume(key))) throw refused;
        },
      };
    }

    /** The initial access token found before the body was read (the request's). */
    const checked = new WeakMap<Request, { use(): Promise<void> }>();

    /** RFC 7592 §3: the registration access token bound to this client; else 401 invalid_token. */
    async function registrationOf(req: Request, clientId: string): Promise<{ reg: Registration; token: string }> {
      const refused = new OAuthError(
        'invalid_token',
        'the registration access token is not valid for this client',
        401,
      );
      const token = bearerOf(req);
      if (!token) throw refused;
      const record = await records.get(`client:${clientId}`);
      const reg = record?.data as Registration | undefined;
      // Never manage an app this plugin did not register (a config app, one made by the admin API).
      if (!reg || !crypto.safeEqual(crypto.sha256(token), reg.token_sha256)) throw refused;
      const app = await apps().get(clientId);
      if (!app || app.source !== 'database' || app.created_at !== reg.app_created_at) {
        // Deleted meanwhile (by an admin), perhaps made again: the registration goes.
        await records.delete(`client:${clientId}`);
        throw refused;
      }
      return { reg, token };
    }

    function answer(
      res: Response,
      status: number,
      app: Record<string, unknown>,
      reg: Registration,
      token: string,
      secret: string | null,
    ): void {
      const clientId = String(app.client_id);
      res
        .status(status)
        .set(noStore)
        .json({
          client_id: clientId,
          ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
          client_id_issued_at: reg.issued_at,
          ...toMetadata(app, reg.info),
          registration_access_token: token,
          registration_client_uri: configurationUri(clientId),
        });
    }

    const bodyOf = (req: Request): Record<string, unknown> => {
      const body: unknown = req.body;
      if (!req.is('application/json') || typeof body !== 'object' || body === null || Array.isArray(body))
        throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata', 400);
      return body as Record<string, unknown>;
    };

    /** clientAdmin's refusals as RFC 7591 §3.2.2 errors. */
    async function store<T>(work: () => Promise<T>): Promise<T> {
      try {
        return await work();
      } catch (err) {
        // By its code: the core's ApiError class may be another copy of the module than this one's.
        const refusal = err as { code?: unknown; status?: unknown; message?: unknown };
        if (refusal.code === 'INVALID_APP' && refusal.status === 400) throw storeRefusal(String(refusal.message));
        throw err;
      }
    }

    const router = services.http.createRouter();
    // Counted and (for registration) authorised before the body is read: a refused call costs little.
    router.use(async (req, _res, next) => {
      if (req.method === 'POST' && req.path === '/') {
        await throttle(registrations, req);
        checked.set(req, await initialToken(req));
      } else {
        await throttle(management, req);
      }
      next();
    });
    router.use(
      services.http.json({ limit: '20kb' }),
      (err: unknown, _req: Request, _res: Response, next: NextFunction) => {
        // Only the JSON parser's own refusal; the checks before it answer as they are.
        const parse = (err as { type?: unknown }).type === 'entity.parse.failed';
        next(parse ? new OAuthError('invalid_client_metadata', 'the body is not valid JSON', 400) : err);
      },
    );

    // RFC 7591 §3.1: register.
    router.post('/', async (req, res) => {
      const { entry, info } = toEntry(bodyOf(req), policy);
      await checked.get(req)!.use();
      const clientId = `${options.client_id_prefix}${crypto.randomToken(16)}`;
      const created = await store(() => apps().create(actor(req, 'registration'), { ...entry, client_id: clientId }));
      const token = crypto.randomToken(32);
      const reg: Registration = {
        token_sha256: crypto.sha256(token),
        secret_sha256: created.client_secret ? crypto.sha256(created.client_secret) : null,
        issued_at: Math.floor(services.clock.now().getTime() / 1000),
        app_created_at: created.app.created_at,
        info: info as JsonObject,
      };
      await records.put(`client:${clientId}`, reg);
      api.logger.info({ clientId, ip: web.clientIp(req) }, 'client registered');
      answer(res, 201, created.app.app, reg, token, created.client_secret);
    });

    // RFC 7592 §2.1: read.
    router.get('/:client_id', async (req, res) => {
      const clientId = String(req.params.client_id);
      const { reg, token } = await registrationOf(req, clientId);
      const app = (await apps().get(clientId))!;
      answer(res, 200, app.app, reg, token, null);
    });

    // RFC 7592 §2.2: replace the metadata; the client id, secret and registration token stay.
    router.put('/:client_id', async (req, res) => {
      const clientId = String(req.params.client_id);
      const { reg, token } = await registrationOf(req, clientId);
      const body = bodyOf(req);
      if (body.client_id !== clientId)
        throw new OAuthError('invalid_client_metadata', 'client_id must be the id of this client', 400);
      const sent = SERVER_FIELDS.filter((f) => body[f] !== undefined);
      if (sent.length)
        throw new OAuthError('invalid_client_metadata', `${sent.join(', ')}: set by the server, not sent`, 400);
      if (body.client_secret !== undefined) {
        const same =
          typeof body.client_secret === 'string' &&
          reg.secret_sha256 !== null &&
          crypto.safeEqual(crypto.sha256(body.client_secret), reg.secret_sha256);
        if (!same)
          throw new OAuthError(
            'invalid_client_metadata',
            'client_secret is not the secret of this client (it cannot be changed)',
            400,
          );
      }
      const { entry, info } = toEntry(body, policy);
      const updated = await store(() => apps().replace(actor(req, clientId), clientId, entry));
      const next: Registration = { ...reg, info: info as JsonObject };
      await records.put(`client:${clientId}`, next);
      answer(res, 200, updated.app, next, token, null);
    });

    // RFC 7592 §2.3: delete; its grants and tokens are revoked.
    router.delete('/:client_id', async (req, res) => {
      const clientId = String(req.params.client_id);
      await registrationOf(req, clientId);
      await apps().delete(actor(req, clientId), clientId);
      await records.delete(`client:${clientId}`);
      api.logger.info({ clientId }, 'registered client deleted itself');
      res.status(204).set(noStore).end();
    });

    api.routes.add({
      path: ENDPOINT_MOUNT,
      router,
      operations: [DCR_ROUTES.register, DCR_ROUTES.read, DCR_ROUTES.update, DCR_ROUTES.remove],
    });
    api.discovery({ registration_endpoint: web.url(ENDPOINT_MOUNT) });
    // A single-page app may register itself from its origin: CORS for the apps' allowed_origins.
    api.cors([ENDPOINT_MOUNT]);

    // Initial access tokens minted by an admin: shown once, kept as digests with their TTL.
    const admin = services.http.createRouter();
    admin.use(
      async (req, _res, next) => {
        await web.requireAdmin(req);
        next();
      },
      services.http.json({ limit: '2kb' }),
    );
    admin.post('/', async (req, res) => {
      const { body } = routeInput(DCR_ROUTES.mintToken, req);
      const ttl = body.ttl_seconds ?? 24 * 3600;
      const uses = body.uses ?? 'single';
      const token = crypto.randomToken(32);
      await records.put(`iat:${crypto.sha256(token)}`, { single: uses === 'single' }, { ttlSeconds: ttl });
      api.logger.info({ uses, ttl }, 'initial access token minted by admin');
      const expiresAt = new Date(services.clock.now().getTime() + ttl * 1000).toISOString();
      res
        .status(201)
        .set(noStore)
        .json({ success: true, status: 201, data: { initial_access_token: token, uses, expires_at: expiresAt } });
    });
    api.routes.add({ path: TOKENS_MOUNT, router: admin, operations: [DCR_ROUTES.mintToken] });
  },
});
