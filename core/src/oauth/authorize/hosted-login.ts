import type { Clock, HostedLoginInput, HostedLoginResult, OAuthClient, Session } from '@gatehouse-auth/plugin-api';
import type { Request, Response } from 'express';
import type { GatehouseConfig } from '../../config/schema.js';
import type { DeviceCookie } from '../../http/device.js';
import { readCookie } from '../../http/cookies.js';
import { randomToken, sha256 } from '../../util/crypto.js';
import { requestFacts } from '../../verification/context.js';
import type { LoginFlow, LoginFlowStore } from '../../verification/flows.js';
import type { ClientRegistry } from '../clients.js';
import type { LogoutService } from '../logout.js';
import type { SessionStore } from '../sessions.js';
import { flowStart, type SingleSignOn, type SsoDecision, type SsoRequest } from '../sso.js';
import { sessionCookieName, type BrowserBinding } from './browser.js';

/** What a login on the hosted page uses, from /authorize or a plugin's page (the cradle provides it). */
export interface HostedLoginDeps {
  config: GatehouseConfig;
  clients: ClientRegistry;
  /** Decides what an existing browser session is worth to the request's app. */
  sso: SingleSignOn;
  sessions: SessionStore;
  logout: LogoutService;
  flows: LoginFlowStore;
  binding: BrowserBinding;
  /** The hosted page's device cookie, for the facts the session-phase FDS rules see. */
  device: DeviceCookie;
}

/** When the user of a completed flow authenticated, in epoch seconds. */
export function authTimeOf(flow: LoginFlow, now: Date): number {
  return Math.floor((flow.authTime ?? now).getTime() / 1000);
}

/** What single sign-on makes of this browser's session for a login of `client` (/authorize's, a plugin page's). */
export async function ssoDecision(
  deps: Pick<HostedLoginDeps, 'config' | 'sso' | 'sessions' | 'device'>,
  req: Request,
  client: OAuthClient,
  login: Pick<SsoRequest, 'loginStages' | 'prompt' | 'maxAge'>,
): Promise<SsoDecision> {
  return deps.sso.decide(await deps.sessions.get(readCookie(req, sessionCookieName(deps.config.issuer))), {
    ...login,
    clientId: client.clientId,
    singleFactorMethods: client.singleFactorMethods,
    request: requestFacts(req, undefined, deps.device),
    logger: req.log,
  });
}

/**
 * A new session cookie for the browser that completed `flow` (ASVS 7.2.4: a new one after every
 * login); a session of another user in this browser ends everywhere.
 */
export async function startBrowserSession(
  deps: Pick<HostedLoginDeps, 'config' | 'sessions' | 'logout' | 'binding'>,
  req: Request,
  res: Response,
  flow: LoginFlow,
  now: Date,
): Promise<Session | null> {
  const cookieName = sessionCookieName(deps.config.issuer);
  const ttl = deps.config.oauth.session_ttl;
  const created = await deps.sessions.create({
    userId: flow.userId!,
    authTime: authTimeOf(flow, now),
    methods: flow.completions,
    ttlSeconds: ttl,
    replaces: readCookie(req, cookieName) ?? null,
  });
  if (created.ended) await deps.logout.endSession(created.ended.sid, 'replaced');
  res.cookie(cookieName, created.cookie, deps.binding.cookieOptions(ttl));
  return deps.sessions.get(created.cookie);
}

/**
 * A login on the hosted page that a plugin's page starts for one of the apps (the device grant's
 * user code page, say) and reads the result of, without being an OAuth client of its own server.
 * It is an app's login like any other: the app's stages, single sign-on from the browser's
 * session where that session is worth it to the app, the flow bound to this browser by its
 * cookie. Its result is read once, by the browser that did it.
 */
export class HostedLogin {
  constructor(private readonly deps: HostedLoginDeps & { clock: Clock; issuerPath: string }) {}

  /**
   * Sends the browser through `clientId`'s login stages, then to `returnTo` with `request_id`
   * added (at once when its session already satisfies the app).
   */
  async start(req: Request, res: Response, input: HostedLoginInput): Promise<void> {
    const { config, clients, flows, binding } = this.deps;
    const client = clients.get(input.clientId);
    if (!client) throw new Error(`hosted login: no app "${input.clientId}"`);
    if (!input.userId && config.apps.find((a) => a.client_id === client.clientId)?.pinned_logins) {
      throw new Error(`hosted login: app "${input.clientId}" has pinned_logins: name the user (userId)`);
    }
    // A login for a known user proves its stages now: no browser session counts for it.
    const start = input.userId
      ? { stages: client.loginStages, userId: input.userId }
      : flowStart(
          await ssoDecision(this.deps, req, client, {
            loginStages: client.loginStages,
            prompt: [],
            maxAge: input.maxAge ?? null,
          }),
          client.loginStages,
        );
    const bindingValue = randomToken(24);
    const flow = await flows.create({
      clientId: client.clientId,
      ...start,
      ttlSeconds: config.verification.flow_ttl,
      params: { return_to: input.returnTo, plugin_login: true, binding: sha256(bindingValue) },
    });
    res.cookie(binding.flowCookie(flow.id), bindingValue, binding.cookieOptions(config.verification.flow_ttl));
    const next = flow.status === 'completed' ? input.returnTo : `${this.deps.issuerPath}/login`;
    res.redirect(303, withRequestId(next, flow.id));
  }

  /**
   * The result of a login `start` began, for the browser that did it, once: null when there is
   * none (unknown, another browser's, not complete, expired or read already).
   */
  async result(req: Request, res: Response, requestId: unknown): Promise<HostedLoginResult | null> {
    const { flows, binding } = this.deps;
    const flow = typeof requestId === 'string' && requestId.length <= 200 ? await flows.get(requestId) : null;
    if (!flow || flow.params.plugin_login !== true || !binding.isBound(req, flow)) return null;
    if (flow.expiresAt <= this.deps.clock.now() || !(await flows.finish(flow.id))) return null;
    binding.dropCookie(res, binding.flowCookie(flow.id));
    const session = await startBrowserSession(this.deps, req, res, flow, this.deps.clock.now());
    return {
      userId: flow.userId!,
      amr: flow.amr,
      authTime: authTimeOf(flow, this.deps.clock.now()),
      methods: flow.completions,
      sid: session!.sid,
    };
  }
}

/** `url` with `request_id` added to its query. */
export function withRequestId(url: string, requestId: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}request_id=${encodeURIComponent(requestId)}`;
}
