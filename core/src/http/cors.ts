import cors from 'cors';
import type { RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import type { AppConfig } from '../config/schema.js';

/**
 * The API paths a browser app on another origin may call (apps[i].allowed_origins): the
 * verification and setup services, for SPAs the token endpoint, JWKS and discovery (plugins add
 * theirs with `api.cors`: the API description, PAR, DCR, userinfo). Never
 * /authorize or the hosted pages: those are navigations, not XHR (RFC 9700 §4.16: no CORS there).
 */
const API_PREFIXES = [
  '/verification-srv/',
  '/verification-actions-srv/',
  '/oauth/token',
  '/oauth2/token',
  '/token/',
  '/token_info',
  '/oauth2/revoke',
  '/.well-known/',
];

/** The request headers such clients send: the usual ones and the cidaas SDKs' own. */
const ALLOWED_HEADERS = [
  'content-type',
  'authorization',
  'accept-language',
  'requestid',
  'trackid',
  'acceptlanguage',
  'lat',
  'lon',
  'device-proof',
  'dpop',
];

/**
 * Every app's allowed origins (the config's and those stored in the database): a browser request
 * from one of them may read the answers. Computed again when the stored apps change.
 */
function allowedOrigins(apps: AppSource): () => Set<string> {
  let version = -1;
  let origins = new Set<string>();
  return () => {
    if (apps.version !== version) {
      version = apps.version;
      origins = new Set(apps.apps().flatMap((app) => app.allowed_origins));
    }
    return origins;
  };
}

/** Where the apps come from: the client registry. */
export interface AppSource {
  apps(): Pick<AppConfig, 'allowed_origins'>[];
  readonly version: number;
}

/**
 * CORS for the API paths, with the `cors` package: an allowed origin gets its own origin back
 * (with credentials, so never `*`), `Vary: Origin`, and real preflights (GET, POST, PUT and the
 * headers above, cached 10 minutes). Another origin gets no CORS headers; its request is still
 * answered as before, for clients that are not browsers.
 */
export function corsMiddleware(
  apps: AppSource,
  issuerPath: string,
  pluginPrefixes: readonly string[] = [],
): RequestHandler {
  const prefixes = [...API_PREFIXES, ...pluginPrefixes];
  const isApiPath = (path: string) => prefixes.some((p) => path.startsWith(p));
  const origins = allowedOrigins(apps);
  const handler = cors({
    origin: (origin, done) => done(null, origin !== undefined && origins().has(origin)),
    methods: ['GET', 'POST', 'PUT'],
    allowedHeaders: ALLOWED_HEADERS,
    // A browser client of DPoP (RFC 9449) reads the server's nonce and the resource's challenge.
    exposedHeaders: ['DPoP-Nonce', 'WWW-Authenticate'],
    credentials: true,
    maxAge: 600,
  });
  return (req, res, next) => {
    const path = req.path.startsWith(issuerPath) ? req.path.slice(issuerPath.length) : req.path;
    if (!isApiPath(path)) return next();
    // Caches must keep answers per origin, whatever this one was.
    res.vary('Origin');
    handler(req, res, next);
  };
}

/** Whether a request comes from another origin's page (it then goes through the CORS middleware). */
export function crossOrigin(issuer: string): (req: IncomingMessage) => boolean {
  const own = new URL(issuer).origin;
  return (req) => typeof req.headers.origin === 'string' && req.headers.origin !== own;
}
