import { checkRouteSpecs, type RouteSpec } from '@gatehouse-auth/plugin-api';
import type { RequestListener } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { BootError } from '../errors.js';
import { errorHandler, notFound, replyLogger } from '../http/error-handler.js';
import { jsonFastRoute, withFastRoutes } from '../http/fast-routes.js';
import { HEALTH_API, healthRoutes } from '../http/health.js';
import { oauthApi } from '../oauth/api.js';
import { corsMiddleware, crossOrigin } from '../http/cors.js';
import { httpLogger } from '../http/logging.js';
import { observeExpress, requestObserver } from '../observability/http.js';
import { assetRoutes } from '../login/assets.js';
import { authorizeRoutes } from '../oauth/authorize/index.js';
import { oauthEndpoints, oauthFastRoutes, oauthRoutes } from '../oauth/endpoints.js';
import type { Cradle } from './cradle.js';
import { TOKEN_BINDING } from '../plugins/loader.js';

/**
 * The HTTP side: an express app with every route group (each takes what it needs from the
 * container), behind a plain node:http front for the hot JSON endpoints (decision 11).
 */
export function buildWeb(cradle: Cradle): {
  express: Express;
  listener: RequestListener;
  fastRoutes: { method: string; path: string }[];
} {
  const c = resolvedOnce(cradle);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', c.config.server.trust_proxy);
  app.use(httpLogger(c.logger));
  const observe = requestObserver(c.metrics, c.tracing);
  if (observe) app.use(observeExpress(observe));
  app.use(
    corsMiddleware(
      c.clients,
      c.issuerPath,
      c.extensions.corsPrefixes.values().map((p) => p.prefix),
    ),
  );
  const oauth = oauthEndpoints(c);
  app.use(oauthRoutes(c, oauth));
  app.use(healthRoutes(c));
  app.use(assetRoutes());
  app.use(authorizeRoutes(c.authorizeContext));
  // A declaration naming an unknown error code, or a path twice, stops the boot.
  try {
    checkRouteSpecs(apiRoutes(c));
  } catch (err) {
    throw new BootError('API_SPEC_INVALID', `the API declarations are inconsistent: ${(err as Error).message}`);
  }
  // A plugin's operation declared in OAuth's style answers its faults so too (a 503
  // `temporarily_unavailable` while the database is out), as the core's own OAuth routes do.
  for (const op of apiRoutes(c).filter((route) => route.errorStyle === 'oauth'))
    app[op.method]([op.path, ...(op.also ?? [])], oauthStyle);
  // The shared `/` last (a stable sort): its routers answer only what no plugin's own mount answers.
  const atRoot = (r: { path: string }) => Number(r.path.replace(/\/+$/, '') === '');
  for (const route of c.extensions.routes.values().sort((a, b) => atRoot(a) - atRoot(b)))
    app.use(route.path, route.router);
  app.use(notFound);
  const logReply = replyLogger();
  app.use(errorHandler(logReply));
  // The plugins' JSON calls (the verification's initiation and step, decision 78) under their mounts.
  const contributed = [...c.extensions.routes.values()].flatMap((r) =>
    (r.fast ?? []).map((f) => jsonFastRoute(r.path.replace(/\/$/, '') + f.path, f)),
  );
  const fastRoutes = [...oauthFastRoutes(oauth), ...contributed];
  const listener = withFastRoutes({
    routes: fastRoutes,
    fallback: app,
    // A call from another origin's page takes the express path, where CORS is answered.
    bypass: crossOrigin(c.config.issuer),
    logger: c.logger,
    logReply,
    observe,
    trustProxy: app.get('trust proxy fn') as (addr: string, i: number) => boolean,
  });
  return { express: app, listener, fastRoutes: fastRoutes.map(({ method, path }) => ({ method, path })) };
}

const oauthStyle: RequestHandler = (_req, res, next) => {
  res.locals.errorStyle = 'oauth';
  next();
};

/** Every JSON operation the server answers, the plugins' under their mount paths (decision 26). */
export function apiRoutes(c: Cradle): RouteSpec[] {
  const contributed = [...c.extensions.routes.values()].flatMap((r) =>
    (typeof r.operations === 'function' ? r.operations() : (r.operations ?? [])).map((op) => ({
      ...op,
      path: r.path.replace(/\/$/, '') + op.path,
      also: op.also?.map((p) => r.path.replace(/\/$/, '') + p),
    })),
  );
  return [
    ...Object.values(HEALTH_API),
    ...Object.values(
      oauthApi(c.extensions.grants.values(), c.extensions.tokenBinding.get(TOKEN_BINDING) !== undefined),
    ),
    ...contributed,
  ];
}

/**
 * The cradle, each service kept once resolved. The route groups read their dependencies per
 * request (`deps.tokens`), and every read of awilix's cradle is a resolve, which allocates (1.5 KB
 * per token request, bench/allocations.ts). Every registration is a singleton or a value, and all
 * are in place before the web side is built, so the kept service is the one awilix would return.
 */
function resolvedOnce(cradle: Cradle): Cradle {
  const kept = new Map<PropertyKey, unknown>();
  // The target is a plain object: a proxy's answers are checked against its target's own
  // properties, and asking awilix's cradle for those allocates more than the resolve saved.
  return new Proxy({} as Cradle, {
    get(_target, name) {
      if (kept.has(name)) return kept.get(name);
      const service: unknown = Reflect.get(cradle, name);
      kept.set(name, service);
      return service;
    },
  });
}
