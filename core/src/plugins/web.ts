import { layout, pageHeaders, type PluginCatalogs, type WebApi } from '@gatehouse-auth/plugin-api';
import type { Cradle } from '../composition/cradle.js';
import { apiRoutes } from '../composition/web.js';
import { bindingRequest } from '../oauth/binding-request.js';
import { fromTrustedProxy, trustFunction } from '../http/trust-proxy.js';
import { readCookie } from '../http/cookies.js';
import { Locales } from '../i18n/locales.js';
import { SharedLimit } from '../limits/shared-counters.js';
import { sessionCookieName } from '../oauth/authorize/browser.js';
import { authorizationParametersOf, validateRequestOf } from '../oauth/authorize/request-uri.js';
import { logoutCsrf } from '../oauth/logout.js';
import { protectedResource, protectedResourceErrors, resourceClaims } from '../oauth/resource.js';
import { randomToken, safeEqual } from '../util/crypto.js';
import { clientIp, requestFacts } from '../verification/context.js';
import { TOKEN_BINDING } from './loader.js';

/** Keys of the core's catalogs the layout itself shows on a plugin's page. */
const LAYOUT_MESSAGES = ['brand.'];
/**
 * The password reveal button's words (`passwordReveal`) on a plugin's page: the core's built-in
 * ones in the page's language, under the plugin's own.
 */
const REVEAL_MESSAGES = ['password.show', 'password.hide'];
let builtin: Locales | null = null;

/**
 * The web API one plugin gets: its limits, catalogs and CSRF tokens are its own. It reads the
 * core's services from the cradle at each call: most are built after the plugins register.
 */
export function pluginWeb(plugin: string, c: Cradle, catalogs: () => PluginCatalogs): WebApi {
  const issuer = c.config.issuer.replace(/\/+$/, '');
  const { secure } = c.binding;
  const csrfCookie = c.binding.cookieName('gh_form');
  const sessionCookie = sessionCookieName(c.config.issuer);
  const ownOrigin = new URL(issuer).origin;
  let locales: Locales | null = null;
  // The layout's own texts (the brand's support link) read through from the core's catalogs.
  const localesOf = () =>
    (locales ??= new Locales(
      new Map(
        Object.entries(catalogs()).map(([locale, own]) => [
          locale,
          {
            ...(builtin ??= Locales.load(undefined)).messages(locale).under(REVEAL_MESSAGES),
            ...c.locales.messages(locale).under(LAYOUT_MESSAGES),
            ...own,
          },
        ]),
      ),
    ));
  const tokenOf = (value: string) => c.services.secrets.mac(`plugin-csrf:${plugin}:${value}`);
  const trust = trustFunction(c.config.server.trust_proxy);

  return {
    issuer,
    base: c.issuerPath,
    url: (path) => `${issuer}${path.startsWith('/') ? path : `/${path}`}`,
    routeSpecs: () => apiRoutes(c),
    methods: () => c.verification.methods(),
    authenticateClient: (req, params) =>
      c.clientAuth.authenticate({ params, authorization: req.headers.authorization, request: req }, clientIp(req)),
    async session(req) {
      const session = await c.sessions.get(readCookie(req, sessionCookie));
      if (!session || !(await c.sso.live(session))) return null;
      return { sid: session.sid, userId: session.userId, authTime: session.authTime, methods: session.methods };
    },
    async endSession(req, res, reason = 'user') {
      const session = await c.sessions.get(readCookie(req, sessionCookie));
      c.binding.dropCookie(res, sessionCookie);
      return session ? c.logout.endSession(session.sid, reason) : false;
    },
    client: (clientId) => c.clients.get(clientId) ?? null,
    logout: {
      async session(req) {
        const cookie = readCookie(req, sessionCookie);
        const session = await c.sessions.get(cookie);
        return session ? { userId: session.userId, sid: session.sid, csrf: logoutCsrf(cookie!) } : null;
      },
      idTokenHint: (token) => c.logout.readIdTokenHint(token),
    },
    limit(name, max, windowSeconds) {
      return new SharedLimit(c.counters, `plugin:${plugin}:${name}`, max, windowSeconds * 1000, c.clock);
    },
    validateAuthorizationRequest: (client, params) => validateRequestOf(c.clients, client, params),
    authorizationParameters: (client, params) =>
      authorizationParametersOf(c.extensions.requestObjects.values()[0], client, params),
    clientKeys: (client) => c.clients.secretsOf(client.clientId)?.keys ?? null,
    async proofOfPossession(req, client) {
      const binding = c.extensions.tokenBinding.get(TOKEN_BINDING);
      if (!binding || req.headers.dpop === undefined) return null;
      const proof = await binding.tokenRequest({ ...bindingRequest(issuer, req), client });
      return proof && { jkt: proof.value, ...(proof.headers ? { headers: proof.headers } : {}) };
    },
    protectedResource: (req, options) => protectedResource(c, req, options),
    protectedResourceErrors: () => protectedResourceErrors(c.extensions),
    userClaims: (access) => resourceClaims(c, access),
    clientIp: (req) => clientIp(req),
    fromTrustedProxy: (req) => fromTrustedProxy(req, trust),
    login: lazy(() => c.hostedLogin),
    messages: (req, uiLocales) => localesOf().for(req, uiLocales),
    headers: (res, formTargets = [], referrer, brand) => pageHeaders(res, formTargets, referrer, brand),
    brand: (clientId) => c.branding.of(clientId),
    loginFlows: lazy(() => c.loginFlows),
    setup: lazy(() => c.setupWeb),
    devices: lazy(() => c.devicesWeb),
    verification: lazy(() => c.verificationWeb),
    authorize: lazy(() => c.authorizeChoices),
    requestFacts: (req) => requestFacts(req),
    requireAdmin: (req) => c.adminGuard.check(req),
    adminTokenSet: Boolean(c.config.admin.token),
    page(req, res, page) {
      const brand = c.branding.of(page.app);
      pageHeaders(res, page.formTargets ?? [], page.referrer ?? 'same-origin', brand);
      const context = { base: c.issuerPath, t: localesOf().for(req, page.uiLocales ?? null), brand };
      res.status(page.status ?? 200).send(layout(context, page.title, page.body, null));
    },
    csrf: {
      token(req, res) {
        let value = readCookie(req, csrfCookie);
        if (!value || value.length > 64) {
          value = randomToken(24);
          res.cookie(csrfCookie, value, { httpOnly: true, secure, sameSite: 'lax', path: '/' });
        }
        return tokenOf(value);
      },
      valid(req, token) {
        // Browsers send Origin with every POST: none, null or another is not this site's form.
        if (req.headers.origin !== ownOrigin) return false;
        const value = readCookie(req, csrfCookie);
        return typeof token === 'string' && value !== undefined && safeEqual(token, tokenOf(value));
      },
    },
  };
}

/** An object whose calls resolve `get` first: the core's services are built after the plugins register. */
function lazy<T extends object>(get: () => T): T {
  return new Proxy({} as T, {
    get: (_target, name) => {
      const target = get() as Record<string | symbol, unknown>;
      const member = target[name];
      return typeof member === 'function' ? (member as (...a: unknown[]) => unknown).bind(target) : member;
    },
  });
}
