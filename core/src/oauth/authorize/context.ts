import type {
  AuthorizationRequestResolver,
  Branding,
  Clock,
  OAuthClient,
  RecordStore,
  RequestObjectVerifier,
  UserRecord,
} from '@gatehouse-auth/plugin-api';
import type { Request, Response } from 'express';
import { SharedLimit, type SharedCounters } from '../../limits/shared-counters.js';
import { clientIp } from '../../verification/context.js';
import type { LoginFlow } from '../../verification/flows.js';
import type { LoginUi } from '../../login/custom-ui.js';
import { errorPage, formPostPage, type PageContext } from '../pages.js';
import { queryUiLocales, type Locales } from '../../i18n/locales.js';
import type { RequiredActions } from '../../users/required-actions.js';
import type { TokenService } from '../tokens.js';
import { sessionCookieName } from './browser.js';
import type { HostedLoginDeps } from './hosted-login.js';
import type { OAuthError } from '../errors.js';
import { alreadyFinished, ErrorPage, errorParams, type AuthorizationRequest } from './request.js';
import { resolveRequestUri } from './request-uri.js';

export const AUTHORIZE_PATHS = ['/api/oauth2/authorize', '/api/oauth2/authorize/'];
export const RESUME_PATH = '/api/oauth2/authorize/resume';
/** The pages of the authorization endpoint's choices, a plugin's (decision 75): used only while one mounts them. */
export const CONSENT_PATH = '/login/consent';
/** The account choice of `prompt=select_account` (OIDC Core §3.1.2.1). */
export const ACCOUNT_PATH = '/login/account';
export const CANCEL_PATH = '/login/cancel';

/** What the authorization endpoint's actions use (the container's cradle provides it). */
export interface AuthorizeDeps extends HostedLoginDeps {
  tokens: TokenService;
  /** Consents given, by `user:client`. */
  consents: RecordStore;
  clock: Clock;
  /** An app's own login UI (login_page_url): where its flows go. */
  loginUi: LoginUi;
  /** The pages' messages. */
  locales: Locales;
  /** The pages' brand: the request's app's, else the global one. */
  branding: Pick<Branding, 'of'>;
  /** Who a session is, for the account choice (`prompt=select_account`). */
  users: { findById(id: string): Promise<UserRecord | null> };
  /** Counters every node shares (the per-address limit). */
  counters: Pick<SharedCounters, 'hit'>;
  /** What plugins registered: the resolver of `request_uri` (plugin API 1.3), if one did. */
  extensions: {
    requestResolvers: { values(): AuthorizationRequestResolver[] };
    requestObjects: { values(): RequestObjectVerifier[] };
    /** `prompt` values plugins answer (`create`, plugin API 1.3): where their flows go. */
    prompts: { get(prompt: string): { path: string } | undefined };
    routes: { has(path: string): boolean };
  };
  /** What an admin asked users to do at their next sign-in (plugin API 1.3). */
  requiredActions: Pick<RequiredActions, 'of'>;
}

/**
 * What the actions of the authorization endpoint share: the pages' base path, the cookies of
 * this issuer, and the steps every action takes (find the browser's flow, answer the client).
 */
export class AuthorizeContext {
  readonly page: { base: string };
  readonly sessionCookie: string;

  private readonly flowStarts: SharedLimit | null;

  constructor(readonly deps: AuthorizeDeps) {
    this.page = { base: new URL(deps.config.issuer).pathname.replace(/\/+$/, '') };
    this.sessionCookie = sessionCookieName(deps.config.issuer);
    // Every flow started writes a row: one address may not start them without bound.
    const perIp = deps.config.oauth.authorize_per_ip_per_minute;
    this.flowStarts = perIp ? new SharedLimit(deps.counters, 'authorize', perIp, 60_000, deps.clock) : null;
  }

  /**
   * A page's base and messages: in the language of the sign-in request's `ui_locales` (or the
   * page URL's own, before a request is valid), then of the browser.
   */
  pageFor(req: Request, request?: Pick<AuthorizationRequest, 'ui_locales' | 'client_id'> | null): PageContext {
    return {
      base: this.page.base,
      t: this.deps.locales.for(req, request?.ui_locales ?? queryUiLocales(req)),
      brand: this.deps.branding.of(request?.client_id),
    };
  }

  /**
   * The query to validate: a `request_uri` replaced by what the plugin's resolver says it
   * stands for, a plain request refused where the resolver requires resolved ones (ErrorPage).
   */
  requestQuery(query: string): Promise<string> {
    const { requestResolvers, requestObjects } = this.deps.extensions;
    return resolveRequestUri(query, this.deps.clients, {
      resolver: requestResolvers.values()[0],
      verifier: requestObjects.values()[0],
    });
  }

  /** Seconds this address must wait before starting another flow (/authorize or generate), if any (every node counts). */
  async flowStartWait(req: Request): Promise<number | null> {
    return (await this.flowStarts?.hit(clientIp(req))) ?? null;
  }

  /**
   * The flow is over: finished (or cancelled) once, by the database, else alreadyFinished; then its
   * cookie is dropped, or a busy browser piles them up past the header limit.
   */
  async end(res: Response, flow: LoginFlow, how: 'finish' | 'cancel' = 'finish'): Promise<void> {
    if (!(await this.deps.flows[how](flow.id))) throw alreadyFinished();
    this.deps.binding.dropCookie(res, this.deps.binding.flowCookie(flow.id));
  }

  /** A completed flow the app is told no about: spent once, its cookie dropped, `error` at the redirect URI. */
  async refuse(res: Response, flow: LoginFlow, request: AuthorizationRequest, error: OAuthError): Promise<void> {
    await this.end(res, flow);
    this.respond(res, request, errorParams(error));
  }

  /** A page of this server for a flow: `path` with its `request_id`. */
  flowUrl(path: string, flow: Pick<LoginFlow, 'id'>): string {
    return `${this.page.base}${path}?request_id=${encodeURIComponent(flow.id)}`;
  }

  /** Where a flow's next stage is done: the app's own login UI, else the hosted page. */
  loginUrl(flow: LoginFlow): string {
    return this.deps.loginUi.url(flow) ?? this.flowUrl('/login', flow);
  }

  /** The flow of this browser: known, bound to its cookie, in the expected state (one of them). */
  async boundFlow(req: Request, requestId: unknown, status: LoginFlow['status'] | LoginFlow['status'][]) {
    const flow = typeof requestId === 'string' ? await this.deps.flows.get(requestId) : null;
    // An authorization's flow only: a login a plugin's page started (web.login) has no request to answer.
    if (!flow?.params.oauth || typeof flow.params.binding !== 'string' || !this.deps.binding.isBound(req, flow)) {
      throw new ErrorPage(400, 'invalid_request', 'This sign-in is unknown or was started in another browser.');
    }
    if (![status].flat().includes(flow.status) || flow.expiresAt.getTime() <= this.deps.clock.now().getTime()) {
      throw new ErrorPage(
        400,
        'invalid_request',
        'This sign-in has expired or is already finished. Start again from the app.',
      );
    }
    return { flow, request: flow.params.oauth as unknown as AuthorizationRequest };
  }

  /** Whether a plugin serves the page at `path` (the consent page, the account choice). */
  serves(path: string): boolean {
    return this.deps.extensions.routes.has(path);
  }

  async needsConsent(client: OAuthClient, userId: string, request: AuthorizationRequest): Promise<boolean> {
    if (!client.consentRequired) return false;
    const given = await this.deps.consents.get(`${userId}:${client.clientId}`);
    const scopes = (given?.data.scopes as string[] | undefined) ?? [];
    return !request.scope.every((s) => scopes.includes(s));
  }

  /**
   * Runs a step; an ErrorPage it throws (before the redirect URI is trusted, or for a broken form)
   * is shown as the core's error page, and null.
   */
  async shown<T>(res: Response, step: () => Promise<T>): Promise<T | null> {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof ErrorPage)) throw err;
      errorPage(res, this.pageFor(res.req), err.status, err.code, err.message);
      return null;
    }
  }

  /** Sends the response to the redirect URI with `state` and `iss` (RFC 9207), in the response mode. */
  respond(res: Response, request: AuthorizationRequest, params: Record<string, string>): void {
    const all: Record<string, string> = {
      ...params,
      ...(request.state ? { state: request.state } : {}),
      iss: this.deps.config.issuer,
    };
    res.set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
    if (request.response_mode === 'form_post') {
      return formPostPage(res, this.pageFor(res.req, request), request.redirect_uri, all);
    }
    const url = new URL(request.redirect_uri);
    if (request.response_mode === 'fragment') {
      url.hash = new URLSearchParams(all).toString();
    } else {
      for (const [k, v] of Object.entries(all)) url.searchParams.append(k, v);
    }
    res.redirect(303, url.toString());
  }
}
