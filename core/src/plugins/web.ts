import type {
  Clock,
  LoginFlowsApi,
  OAuthClient,
  PluginCatalogs,
  RouteSpec,
  Services,
  SetupApi,
  TokenBinding,
  WebApi,
} from '@gatehouse-auth/plugin-api';
import type { JWTVerifyGetKey } from 'jose';
import { bindingRequest } from '../oauth/binding-request.js';
import { fromTrustedProxy, trustFunction } from '../http/trust-proxy.js';
import type { GatehouseConfig } from '../config/schema.js';
import { readCookie } from '../http/cookies.js';
import { Locales } from '../i18n/locales.js';
import { SharedLimit, type SharedCounters } from '../limits/shared-counters.js';
import type { Branding } from '../login/branding.js';
import { pageHeaders } from '../login/headers.js';
import { layout } from '../login/layout.js';
import type { HostedLogin } from '../oauth/authorize/hosted-login.js';
import { sessionCookieName, type BrowserBinding } from '../oauth/authorize/browser.js';
import type { ClientAuthenticator } from '../oauth/client-auth.js';
import type { ClientRegistry } from '../oauth/clients.js';
import { logoutCsrf, type LogoutService } from '../oauth/logout.js';
import type { SessionStore } from '../oauth/sessions.js';
import type { SingleSignOn } from '../oauth/sso.js';
import { randomToken, safeEqual } from '../util/crypto.js';
import { clientIp, requestFacts } from '../verification/context.js';
import type { AdminGuard } from '../http/admin-guard.js';

export interface WebDeps {
  config: GatehouseConfig;
  clock: Clock;
  services: Pick<Services, 'secrets'>;
  counters: SharedCounters;
  /** Resolved when a request needs them (they are built after the plugins register). */
  clientAuth: () => Pick<ClientAuthenticator, 'authenticate'>;
  /** /authorize's validation of a request's parameters, refusals as OAuthErrors. */
  validateRequest: (client: OAuthClient, params: Record<string, string>) => void;
  /** What web.authorizationParameters answers (the request object verifier's word). */
  authorizationParameters: (client: OAuthClient, params: Record<string, string>) => Promise<Record<string, string>>;
  /** The app's public keys, from the client registry. */
  clientKeys: (client: OAuthClient) => JWTVerifyGetKey | null;
  /** The DPoP token binding a plugin registered (`cnf.jkt`), if any. */
  tokenBinding: () => TokenBinding | undefined;
  sessions: () => Pick<SessionStore, 'get'>;
  /** Ends a browser session everywhere (back-channel logout too); reads an `id_token_hint`. */
  logout: () => Pick<LogoutService, 'endSession' | 'readIdTokenHint'>;
  clients: () => Pick<ClientRegistry, 'get'>;
  binding: () => Pick<BrowserBinding, 'dropCookie'>;
  sso: () => Pick<SingleSignOn, 'live'>;
  hostedLogin: () => Pick<HostedLogin, 'start' | 'result'>;
  loginFlows: () => LoginFlowsApi;
  setup: () => SetupApi;
  adminGuard: () => Pick<AdminGuard, 'check'>;
  branding: () => Pick<Branding, 'of'>;
  /** The core's catalogs: the layout's texts under a plugin's. */
  locales: () => Pick<Locales, 'messages'>;
  /** Every declared JSON operation (composition/web.ts apiRoutes). */
  routeSpecs: () => readonly RouteSpec[];
}

/** Keys of the core's catalogs the layout itself shows on a plugin's page. */
const LAYOUT_MESSAGES = ['brand.'];

/** The web API one plugin gets: its limits, catalogs and CSRF tokens are its own. */
export function pluginWeb(plugin: string, deps: WebDeps, catalogs: () => PluginCatalogs): WebApi {
  const issuer = deps.config.issuer.replace(/\/+$/, '');
  const base = new URL(issuer).pathname.replace(/\/+$/, '');
  const secure = issuer.startsWith('https://');
  const csrfCookie = `${secure ? '__Host-' : ''}gh_form`;
  const ownOrigin = new URL(issuer).origin;
  let locales: Locales | null = null;
  // The layout's own texts (the brand's support link) read through from the core's catalogs.
  const localesOf = () =>
    (locales ??= new Locales(
      new Map(
        Object.entries(catalogs()).map(([locale, own]) => [
          locale,
          { ...deps.locales().messages(locale).under(LAYOUT_MESSAGES), ...own },
        ]),
      ),
    ));
  const tokenOf = (value: string) => deps.services.secrets.mac(`plugin-csrf:${plugin}:${value}`);
  const trust = trustFunction(deps.config.server.trust_proxy);

  return {
    issuer,
    url: (path) => `${issuer}${path.startsWith('/') ? path : `/${path}`}`,
    routeSpecs: () => deps.routeSpecs(),
    authenticateClient: (req, params) =>
      deps.clientAuth().authenticate({ params, authorization: req.headers.authorization, request: req }, clientIp(req)),
    async session(req) {
      const session = await deps.sessions().get(readCookie(req, sessionCookieName(deps.config.issuer)));
      if (!session || !(await deps.sso().live(session))) return null;
      return { sid: session.sid, userId: session.userId, authTime: session.authTime, methods: session.methods };
    },
    async endSession(req, res, reason = 'user') {
      const cookieName = sessionCookieName(deps.config.issuer);
      const session = await deps.sessions().get(readCookie(req, cookieName));
      deps.binding().dropCookie(res, cookieName);
      return session ? deps.logout().endSession(session.sid, reason) : false;
    },
    client: (clientId) => deps.clients().get(clientId) ?? null,
    logout: {
      async session(req) {
        const cookie = readCookie(req, sessionCookieName(deps.config.issuer));
        const session = await deps.sessions().get(cookie);
        return session ? { userId: session.userId, sid: session.sid, csrf: logoutCsrf(cookie!) } : null;
      },
      idTokenHint: (token) => deps.logout().readIdTokenHint(token),
    },
    limit(name, max, windowSeconds) {
      return new SharedLimit(deps.counters, `plugin:${plugin}:${name}`, max, windowSeconds * 1000, deps.clock);
    },
    validateAuthorizationRequest: (client, params) => deps.validateRequest(client, params),
    authorizationParameters: (client, params) => deps.authorizationParameters(client, params),
    clientKeys: (client) => deps.clientKeys(client),
    async proofOfPossession(req, client) {
      const binding = deps.tokenBinding();
      if (!binding || req.headers.dpop === undefined) return null;
      const proof = await binding.tokenRequest({ ...bindingRequest(issuer, req), client });
      return proof && { jkt: proof.value, ...(proof.headers ? { headers: proof.headers } : {}) };
    },
    clientIp: (req) => clientIp(req),
    fromTrustedProxy: (req) => fromTrustedProxy(req, trust),
    login: {
      start: (req, res, input) => deps.hostedLogin().start(req, res, input),
      result: (req, res, requestId) => deps.hostedLogin().result(req, res, requestId),
    },
    messages: (req, uiLocales) => localesOf().for(req, uiLocales),
    headers: (res, formTargets = [], referrer, brand) => pageHeaders(res, formTargets, referrer, brand),
    brand: (clientId) => deps.branding().of(clientId),
    loginFlows: lazy(deps.loginFlows),
    setup: lazy(deps.setup),
    requestFacts: (req) => requestFacts(req),
    requireAdmin: (req) => deps.adminGuard().check(req),
    page(req, res, page) {
      const brand = deps.branding().of(page.app);
      pageHeaders(res, page.formTargets ?? [], page.referrer ?? 'same-origin', brand);
      const context = { base, t: localesOf().for(req, page.uiLocales ?? null), brand };
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
