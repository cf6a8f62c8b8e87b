import { PLUGGABLE_AUTH_METHODS, SIGNING_ALGS } from '@gatehouse-auth/plugin-api';
import { z } from 'zod';
import { deadEndStage } from '../verification/stages.js';

/** Reports a problem at a key path below the object being refined, in one line. */
function reporter(ctx: z.RefinementCtx): (path: PropertyKey[], message: string) => void {
  return (path, message) => ctx.addIssue({ code: 'custom', path, message });
}

/** An absolute http(s) URL; `noFragment` for redirect URIs (RFC 6749 §3.1.2). */
export function absoluteUrl(opts: { noFragment?: boolean; privateUseScheme?: boolean } = {}) {
  return z.string().superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
      return;
    }
    const nativeApp = opts.privateUseScheme && PRIVATE_USE_SCHEME.test(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:' && !nativeApp) {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
    } else if (opts.noFragment && (url.hash || value.includes('#'))) {
      ctx.addIssue({ code: 'custom', message: 'must not contain a fragment' });
    }
  });
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** RFC 8252 §7.1: a native app's private-use URI scheme is a reversed domain name (has a dot). */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:/i;

/**
 * Where a URL would carry codes, tokens or credentials over plain HTTP to another machine: only
 * https, or http to a loopback host (RFC 8252 §7.3), unless `dev_mode` says otherwise.
 */
export function insecureUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'http:' && !LOOPBACK_HOSTS.includes(url.hostname);
}

/** A redirect URI: an absolute http(s) URL, or a native app's private-use scheme (RFC 8252 §7.1). */
const redirectUri = absoluteUrl({ noFragment: true, privateUseScheme: true });

const port = z.coerce.number().int().min(0).max(65535);
/** A whole number of at least 1: a count, a size, a lifetime or a timeout. */
const positive = z.number().int().positive();
/** A whole number of at least 0, where 0 is usually "off" or "no limit". */
const nonNegative = z.number().int().min(0);

const serverSchema = z.strictObject({
  host: z.string().default('0.0.0.0'),
  port: port.default(3000),
  /** express `trust proxy`: false, true, a hop count, or a list of addresses/subnets. */
  trust_proxy: z.union([z.boolean(), nonNegative, z.string()]).default(false),
  tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1) }).optional(),
  /**
   * After SIGTERM, how long the node keeps serving (keep-alive connections included) with
   * `/health/ready` at 503, so a load balancer stops sending before connections close.
   */
  shutdown_delay_ms: nonNegative.default(1000),
  /**
   * How far V8 lets the old generation grow past what survived the last full collection, in
   * percent (its own default lets it grow up to 4×). 50 keeps a busy node's peak memory near
   * 250 MB instead of 380 MB at the same CPU per request (docs/performance.md, decision 55);
   * 0 leaves V8's heuristics. It is process-wide: the last server started in a process sets it.
   */
  heap_growth_percent: nonNegative.max(400).default(50),
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdown_timeout_ms: positive.default(10_000),
  /**
   * After that, how long handlers whose connection was cut may still run (queued hashing, their
   * writes) before the database closes under them.
   */
  shutdown_settle_ms: positive.default(5_000),
  /** A client that has not sent all its request headers by then gets 408 and is cut off. */
  headers_timeout_ms: positive.default(10_000),
  /** The whole request (headers and body) must arrive within this; slower ones get 408. */
  request_timeout_ms: positive.default(30_000),
  /** Worker processes (node:cluster) sharing the port; 0 = one per CPU. */
  workers: nonNegative.max(64).default(1),
});

const databaseSchema = z.strictObject({
  url: z
    .string()
    .regex(/^(sqlite:|postgres(ql)?:\/\/)/, 'must start with sqlite: or postgres://')
    .default('sqlite:./data/gatehouse.db'),
  /** Log every SQL statement at debug level. */
  log_sql: z.boolean().default(false),
  pool_max: positive.default(10),
  /**
   * PostgreSQL: how long to wait for a connection (a new one, or a free one of the pool), and for
   * a query's answer, before the request fails with 503 STORE_UNAVAILABLE instead of hanging.
   */
  connect_timeout_ms: positive.default(1000),
  query_timeout_ms: positive.default(5000),
});

const secretsSchema = z.strictObject({
  /**
   * Key for encrypting secrets at rest (TOTP seeds, signing keys): 32 bytes, base64.
   * Without it a key is generated once into `key_file` (fine for one node, not for many).
   */
  encryption_key: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded as base64')
    .optional(),
  key_file: z.string().default('./data/encryption.key'),
});

const adminSchema = z.strictObject({
  /** Bearer token of the admin API; at least 32 characters. Leave unset to disable the API. */
  token: z.string().min(32, 'must be at least 32 characters').optional(),
});

const pluginEntrySchema = z
  .strictObject({
    /** npm package name, e.g. @gatehouse-auth/method-totp */
    name: z.string().min(1).optional(),
    /** or a path to a plugin package/module, relative to the config file */
    path: z.string().min(1).optional(),
    options: z.record(z.string(), z.unknown()).default({}),
  })
  .superRefine((entry, ctx) => {
    if (!entry.name === !entry.path) {
      ctx.addIssue({ code: 'custom', message: 'needs exactly one of "name" or "path"' });
    }
  });

const methodId = z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be an upper-case method id such as TOTP');

const AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
  'none',
  // Mutual TLS (RFC 8705 §2): a plugin authenticates these (`api.clientAuthentication`).
  ...PLUGGABLE_AUTH_METHODS,
] as const;

const jwkSchema = z.looseObject({ kty: z.string(), kid: z.string().optional(), alg: z.string().optional() });

/**
 * An app. Its own keys are these; the keys plugins add (`appConfig`: a grant's trusted issuers,
 * say) pass here and are checked once the plugins are loaded (plugins/app-config.ts), where an
 * unknown key is refused as it would be here.
 */
export const appSchema = z
  .looseObject({
    client_id: z
      .string()
      .min(1)
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
    name: z.string().optional(),
    /** The secret itself (from ${ENV}); needed for client_secret_jwt. Kept only as a digest in memory. */
    client_secret: z.string().min(32, 'must be at least 32 characters').optional(),
    /** Or only its SHA-256 (base64url), so the config holds no secret. */
    client_secret_sha256: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url SHA-256 digest (43 characters)')
      .optional(),
    token_endpoint_auth_method: z.enum(AUTH_METHODS).optional(),
    /** Public keys for private_key_jwt client authentication and signed request objects. */
    jwks: z.strictObject({ keys: z.array(jwkSchema).min(1) }).optional(),
    /** Or where the app publishes them (fetched when needed, cached 10 minutes; a new kid fetches again). */
    jwks_uri: absoluteUrl({ noFragment: true }).optional(),
    /** Exact match; https, http on a loopback host, or a native app's private-use scheme (public apps). */
    redirect_uris: z.array(redirectUri).default([]),
    /**
     * `state` required on /authorize (OAuth 2.0 CSRF protection). Left out: required when the
     * request has no PKCE code_challenge, which protects the code by itself (RFC 9700 §2.1).
     */
    require_state: z.boolean().optional(),
    /** Where RP-Initiated Logout may send the browser afterwards (exact match). */
    post_logout_redirect_uris: z.array(absoluteUrl({ noFragment: true })).default([]),
    /**
     * The app's own login UI (cidaas-style): /authorize sends the browser there with `requestId`
     * instead of to the hosted page, and so do later stages and errors of its form POSTs.
     */
    login_page_url: absoluteUrl({ noFragment: true }).optional(),
    /** Grant types the app may use; left out: authorization_code (see DEFAULT_GRANT_TYPES). */
    grant_types: z.array(z.string().min(1)).optional(),
    response_types: z.array(z.string().min(1)).default(['code']),
    scopes: z.array(z.string().min(1)).default(['openid']),
    /** Login stages in order; each lists the methods that may complete it. */
    login_stages: z.array(z.array(methodId).min(1)).default([]),
    /**
     * Authentication context classes the app offers (OIDC `acr_values`), weakest first. Each is the
     * app's `login_stages` with more stages after them: a request may ask for a stronger login
     * than the app's, never a weaker one. The ID token's `acr` is the strongest one met.
     */
    acr_values: z
      .array(
        z.strictObject({
          acr: z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be printable ASCII without spaces'),
          login_stages: z.array(z.array(methodId).min(1)).min(1),
        }),
      )
      .default([]),
    /**
     * Methods that may complete the whole login alone when the request says `single_factor_auth`
     * (only methods that allow it: FACE, a device key unlocked by the user's face).
     */
    single_factor_methods: z.array(methodId).default([]),
    /**
     * Since plugin API 1.3, for a plugin's own app (`api.app`) only: every login of it is for a
     * user known beforehand (`web.login.start` with `userId`, which it then requires), so its
     * first stage never signs anyone in by itself and the binding rule does not count it.
     */
    pinned_logins: z.boolean().default(false),
    /**
     * Web origins whose pages may call Gatehouse's APIs from the browser (CORS), exactly:
     * `https://shop.example` (scheme, host, port; no path, no wildcard).
     */
    allowed_origins: z
      .array(
        z.string().refine((o) => URL.canParse(o) && new URL(o).origin === o && /^https?:$/.test(new URL(o).protocol), {
          message: 'must be an origin: scheme, host and port only (https://app.example)',
        }),
      )
      .default([]),
    consent_required: z.boolean().default(false),
    /** Access tokens as JWT (RFC 9068) or opaque. */
    token_format: z.enum(['jwt', 'opaque']).default('jwt'),
    /** The ID tokens' (and logout tokens') algorithm; OIDC Core §15.1 expects RS256 of every OP. */
    id_token_signed_response_alg: z.enum(SIGNING_ALGS).default('RS256'),
    /**
     * The user claims in ID tokens: those the `claims` parameter asks for (`requested`, OIDC Core
     * §5.4), or also every claim of the granted scopes (`scope`), for apps that read the profile
     * from the ID token (Auth.js).
     */
    id_token_claims: z.enum(['requested', 'scope']).default('requested'),
    /** The JWT access tokens' algorithm (ES256: small and quick to sign). */
    access_token_signed_response_alg: z.enum(SIGNING_ALGS).default('ES256'),
    access_token_ttl: positive.default(3600),
    /** Absolute lifetime of a refresh token family. */
    refresh_token_ttl: positive.default(30 * 24 * 3600),
    id_token_ttl: positive.default(3600),
    /** Authorization code lifetime: "a few seconds" in the spec; RFC 6749 allows at most 10 minutes. */
    code_ttl: positive.max(600).default(30),
    /**
     * Per-app options of methods, by method id (`methods: { SECURITYQUESTION: {...} }`), each
     * checked against the method's `appOptions` schema once plugins are loaded.
     */
    methods: z.record(methodId, z.unknown()).default({}),
  })
  .superRefine((app, ctx) => {
    const report = reporter(ctx);
    // Each stage needs its own method: a stage every method of which could already be used is
    // a login that can get stuck (or, before, one method counted twice).
    const deadEnd = ({ after }: { after: string[] }) =>
      `can only be met by a method already used at an earlier stage (after ${after.join(', ')})`;
    const stuck = deadEndStage(app.login_stages);
    if (stuck) report(['login_stages', stuck.stage], `${deadEnd(stuck)}; each stage needs a method of its own`);
    app.acr_values.forEach((level, i) => {
      const prefix = level.login_stages.slice(0, app.login_stages.length);
      if (JSON.stringify(prefix) !== JSON.stringify(app.login_stages)) {
        report(
          ['acr_values', i, 'login_stages'],
          "must begin with the app's login_stages (an acr may only add stages)",
        );
      }
      const dead = deadEndStage(level.login_stages);
      if (dead) report(['acr_values', i, 'login_stages', dead.stage], deadEnd(dead));
    });
    const method = app.token_endpoint_auth_method;
    const hasSecret = Boolean(app.client_secret || app.client_secret_sha256);
    if (app.client_secret && app.client_secret_sha256) {
      report(['client_secret_sha256'], 'give client_secret or client_secret_sha256, not both');
    }
    if ((method === 'tls_client_auth' || method === 'self_signed_tls_client_auth') && hasSecret) {
      report(['token_endpoint_auth_method'], `a ${method} app authenticates with its certificate and has no secret`);
    }
    if (method === 'none' && hasSecret) {
      report(['token_endpoint_auth_method'], 'a public client (none) must not have a secret');
    }
    if ((method === 'client_secret_basic' || method === 'client_secret_post') && !hasSecret) {
      report(['client_secret'], `is required for ${method}`);
    }
    if (method === 'client_secret_jwt' && !app.client_secret) {
      report(['client_secret'], 'is required (in clear) for client_secret_jwt');
    }
    const hasKeys = Boolean(app.jwks || app.jwks_uri);
    if (app.jwks && app.jwks_uri) report(['jwks_uri'], 'cannot be set beside jwks: give one of them');
    const isPublic = method === 'none' || (!method && !hasSecret && !hasKeys);
    app.redirect_uris.forEach((uri, i) => {
      if (!isPublic && !/^https?:/i.test(uri)) {
        report(['redirect_uris', i], 'a private-use scheme is for native (public) apps only; use https');
      }
    });
    if ((method === 'private_key_jwt' || method === 'self_signed_tls_client_auth') && !hasKeys) {
      report(['jwks'], `(or jwks_uri) is required for ${method}`);
    }
  });

const verificationSchema = z.strictObject({
  /** Lifetime of an exchange_id in seconds. */
  exchange_ttl: positive.default(600),
  /** Wrong proofs allowed per exchange before it is burned. */
  max_attempts: positive.default(5),
  /** Initiations (each a new exchange: resends included) one login flow may make. */
  max_initiations_per_flow: positive.default(20),
  /**
   * Seconds before a method that sends (a code by text, email or call) may send again in the
   * same stage of a login; the initiation answers `resend_after`. 0: no interval.
   */
  resend_interval_seconds: nonNegative.max(600).default(0),
  /** Lifetime of an AUTHENTICATED status_id, in seconds, to continue the login. */
  status_ttl: positive.default(120),
  /** Lifetime of a login flow (request_id), in seconds. */
  flow_ttl: positive.default(1800),
  /** FDS rule ids in the order they run; default: every registered rule, in plugin order. */
  fds_rules: z.array(z.string().min(1)).optional(),
  /** A rule slower than this fails closed (deny). */
  fds_timeout_ms: positive.default(2000),
});

const maintenanceSchema = z.strictObject({
  /** How often expired rows are purged (0 turns the job off). */
  purge_interval_seconds: nonNegative.default(300),
  purge_batch_size: positive.max(10_000).default(500),
  purge_max_batches: positive.default(100),
  /** Events (verification outcomes, FDS verdicts) are kept this long. */
  event_retention_days: positive.default(90),
});

/** The hosted pages' languages (docs/locales.md). */
const localesSchema = z.strictObject({
  /**
   * A directory of `<locale>.json` message files (relative to the working directory) that
   * override the built-in messages and add locales.
   */
  messages_dir: z.string().min(1).optional(),
});

const oauthSchema = z.strictObject({
  /** Browser session (SSO) lifetime in seconds; NIST 800-63B AAL2 allows at most 24 h. */
  session_ttl: positive.max(86_400).default(86_400),
  /**
   * A browser session not used to sign in to any app for this long signs no one in: the user
   * signs in again (NIST 800-63B-4 §2.2.3: after 1 h of inactivity at AAL2).
   */
  session_idle_ttl: positive.max(86_400).default(3600),
  /** `gatehouse keys rotate`: a new key is published this long before it signs. */
  key_activation_delay: nonNegative.default(3600),
  /**
   * The algorithms the server keeps signing keys for, each with its own key in the JWKS and the
   * same staged rotation. Every app's algorithms must be among them.
   */
  signing_algs: z.array(z.enum(SIGNING_ALGS)).min(1).default(['RS256', 'ES256']),
  /**
   * An app's `jwks_uri` is fetched again for a `kid` it does not know (a rotated key) at most
   * once in this many seconds; its keys are otherwise kept 10 minutes.
   */
  jwks_uri_refetch_seconds: nonNegative.max(600).default(30),
  /** Authorization requests one client IP may start per minute, across nodes (0 = no limit). */
  authorize_per_ip_per_minute: nonNegative.default(300),
  /**
   * Active access tokens kept in memory for introspection and bearer checks (decision 29):
   * revocations reach every node's cache at once (PostgreSQL LISTEN/NOTIFY, cluster IPC).
   */
  token_cache: z
    .strictObject({
      /** 0 turns the cache off. */
      max_entries: nonNegative.max(1_000_000).default(10_000),
      /** A backstop: an entry is read again from the database after this long. */
      max_age_seconds: positive.default(300),
      /**
       * SQLite: how often each node reads the revocations other processes on the file wrote
       * (a command run from a shell; decision 0089). 0 turns it off.
       */
      poll_seconds: z.number().min(0).max(60).default(1),
    })
    .prefault({}),
  /**
   * Apps stored in the database (the admin API, the CLI): each node also checks this often
   * whether they changed, for the nodes the peer bus does not reach (decision 0051); 0 turns the
   * check off (changes then arrive by the peer bus only).
   */
  clients_poll_seconds: z.number().min(0).max(3600).default(5),
});

const configFields = z.strictObject({
  // RFC 8414 §2, OIDC Discovery §3: no query or fragment (they could not survive being the
  // prefix of every endpoint URL, and `iss` is compared as a string).
  issuer: absoluteUrl()
    .refine((v) => !v.includes('?') && !v.includes('#'), 'must have no query or fragment (RFC 8414 §2)')
    .default('http://localhost:3000'),
  /**
   * Development only: allows plain-http issuer and app URLs on other hosts than loopback ones.
   * Without it, every URL that carries codes or tokens must be https (or http to this machine).
   */
  dev_mode: z.boolean().default(false),
  server: serverSchema.prefault({}),
  database: databaseSchema.prefault({}),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
  secrets: secretsSchema.prefault({}),
  admin: adminSchema.prefault({}),
  verification: verificationSchema.prefault({}),
  oauth: oauthSchema.prefault({}),
  maintenance: maintenanceSchema.prefault({}),
  locales: localesSchema.prefault({}),
  plugins: z.array(pluginEntrySchema).default([]),
  apps: z.array(appSchema).default([]),
});

type ConfigFields = z.output<typeof configFields>;
type Report = ReturnType<typeof reporter>;

export const configSchema = configFields.superRefine((config, ctx) => {
  const report = reporter(ctx);
  if (!config.dev_mode) requireHttps(config, report);
  const seen = new Map<string, number>();
  config.apps.forEach((app, i) => {
    const first = seen.get(app.client_id);
    if (first !== undefined) {
      report(['apps', i, 'client_id'], `duplicates apps[${first}].client_id "${app.client_id}"`);
    } else seen.set(app.client_id, i);
    for (const key of ['id_token_signed_response_alg', 'access_token_signed_response_alg'] as const) {
      if (!config.oauth.signing_algs.includes(app[key])) {
        report(
          ['apps', i, key],
          `${app[key]} is not among oauth.signing_algs (${config.oauth.signing_algs.join(', ')})`,
        );
      }
    }
  });
});

/**
 * The core's URL-valued app settings that carry codes, tokens or logins: https outside dev_mode.
 * A plugin names its own in `appUrlKeys` (plugins/app-config.ts checks them the same way).
 */
export const APP_URL_KEYS = ['redirect_uris', 'post_logout_redirect_uris', 'login_page_url'] as const;

/** Why a plain-http URL of the config is refused. */
export const HTTPS_REQUIRED =
  'must be https (http only to localhost, 127.0.0.1 or [::1]); set dev_mode: true for a test setup';

function requireHttps(config: ConfigFields, report: Report): void {
  const why = HTTPS_REQUIRED;
  if (insecureUrl(config.issuer)) report(['issuer'], why);
  config.apps.forEach((app, i) => {
    for (const key of APP_URL_KEYS) {
      const value = app[key];
      const urls = Array.isArray(value) ? value : value === undefined ? [] : [value];
      urls.forEach((url, j) => {
        if (insecureUrl(url)) report(['apps', i, key, ...(Array.isArray(value) ? [j] : [])], why);
      });
    }
  });
}

export type GatehouseConfig = z.output<typeof configSchema>;
export type AppConfig = z.output<typeof appSchema>;

/** The grant types of an app that names none. */
export const DEFAULT_GRANT_TYPES = ['authorization_code'];

/** Every method an app's logins may use: its stages and those of its acr values. */
export function appMethods(app: Pick<AppConfig, 'login_stages' | 'acr_values'>): string[] {
  return [...new Set([...app.login_stages, ...app.acr_values.flatMap((a) => a.login_stages)].flat())];
}

/** The keys of an app the core itself defines (the rest are plugins'). */
export function appSchemaKeys(): string[] {
  return Object.keys(appSchema.shape);
}
export type PluginEntry = GatehouseConfig['plugins'][number];
