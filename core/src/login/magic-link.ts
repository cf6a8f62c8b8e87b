import { type Branding, type Clock, html, type PageContext } from '@gatehouse-auth/plugin-api';
import express, { type Request, type Response, type Router } from 'express';
import { isProtocolError } from '../errors.js';
import { formBody } from '../http/parsers.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { BrowserBinding } from '../oauth/authorize/browser.js';
import { requestFacts } from '../verification/context.js';
import type { ExchangeStore } from '../verification/exchanges.js';
import type { LoginFlowStore } from '../verification/flows.js';
import { locationAfter, type LoginRedirects } from '../verification/routes.js';
import { LINK_PATH, type VerificationService } from '../verification/service.js';
import { linkFactsOf } from '../verification/link-facts.js';
import { pageHeaders } from './headers.js';
import { linkDetails } from './link-details.js';
import { layout, renderErrorPage, renderNoticePage } from './layout.js';
import type { Locales } from '../i18n/locales.js';
import type { LoginFlow } from '../verification/flows.js';

/** What the link page uses (the container's cradle provides it). */
export interface MagicLinkDeps {
  verification: VerificationService;
  exchanges: ExchangeStore;
  flows: LoginFlowStore;
  binding: Pick<BrowserBinding, 'isBound'>;
  clients: ClientRegistry;
  loginRedirects: LoginRedirects;
  issuerPath: string;
  clock: Clock;
  locales: Locales;
  /** The link's pages show its app's brand. */
  branding: Pick<Branding, 'of'>;
}

/** Why a link does not work: its message is `link.problem.<reason>`. */
class LinkProblem extends Error {
  constructor(readonly reason: 'invalid' | 'used' | 'revoked' | 'expired' | 'over') {
    super(reason);
  }
}

/**
 * The page a sign-in link (`processingType: LINK`) opens. In the browser that is doing the login
 * (its flow cookie) the GET verifies the exchange and the login goes on. Anywhere else it only
 * asks: a mail scanner's GET must not sign anyone in, and whoever confirms on another device
 * sees which app asks, the browser that started it, when, and a number to compare with the
 * starting screen's; the login then goes on where it started (that page polls
 * the status). "It was not me" cancels the exchange.
 */
export function magicLinkRoutes(deps: MagicLinkDeps): Router {
  const router = express.Router();
  const base = deps.issuerPath;

  /** In the sign-in request's language where the link's flow is known, else the browser's. */
  const pageOf = (req: Request, flow?: LoginFlow | null): PageContext => {
    const oauth = flow?.params.oauth as { ui_locales?: unknown } | undefined;
    return {
      base,
      t: deps.locales.for(req, typeof oauth?.ui_locales === 'string' ? oauth.ui_locales : null),
      brand: deps.branding.of(flow?.clientId),
    };
  };

  /** A notice (status < 400) or an error page: a title and a sentence, by their message keys. */
  const page = (req: Request, res: Response, status: number, keys: [string, string], flow?: LoginFlow | null) => {
    const ctx = pageOf(req, flow);
    pageHeaders(res, [], undefined, ctx.brand);
    const [title, text] = keys.map((key) => ctx.t.t(key)) as [string, string];
    res.status(status).send((status < 400 ? renderNoticePage : renderErrorPage)(ctx, title, text));
  };

  /** The link's exchange and login, both still live; else why the link no longer works. */
  const open = async (methodId: string, exchangeId: unknown) => {
    const exchange = typeof exchangeId === 'string' ? await deps.exchanges.find(exchangeId) : null;
    if (!exchange || exchange.method !== methodId) throw new LinkProblem('invalid');
    if (exchange.usedAt) throw new LinkProblem('used');
    if (exchange.revokedAt) throw new LinkProblem('revoked');
    if (exchange.expiresAt <= deps.clock.now()) throw new LinkProblem('expired');
    const flow = await deps.flows.get(exchange.flowId);
    if (!flow || flow.status !== 'active' || flow.expiresAt <= deps.clock.now()) {
      throw new LinkProblem('over');
    }
    return { exchange, flow, exchangeId: exchangeId as string };
  };

  /** The link's proof: its token in the method's one verify field. */
  const proof = (methodId: string, exchangeId: string, token: string) => ({
    exchange_id: exchangeId,
    [deps.verification.method(methodId).verifyFields[0]!]: token,
  });

  /** Runs a step of the link page; refusals become a page, never a JSON error. */
  const guarded =
    (step: (req: Request, res: Response, methodId: string, token: string) => Promise<void>) =>
    async (req: Request, res: Response) => {
      const methodId = String(req.params.method).toUpperCase();
      const source = req.method === 'POST' ? (req.body as Record<string, unknown>) : req.query;
      const token = typeof source.token === 'string' ? source.token : '';
      try {
        if (!deps.verification.method(methodId).links || !token) throw new LinkProblem('invalid');
        await step(req, res, methodId, token);
      } catch (err) {
        if (err instanceof LinkProblem)
          return page(req, res, 400, ['link.problem.title', `link.problem.${err.reason}`]);
        if (isProtocolError(err)) return page(req, res, 400, ['link.problem.title', 'link.problem.refused']);
        throw err;
      }
    };

  router.get(
    LINK_PATH,
    guarded(async (req, res, methodId, token) => {
      const { flow, exchange, exchangeId } = await open(methodId, req.query.exchange_id);
      if (typeof flow.params.binding === 'string' && deps.binding.isBound(req, flow)) {
        const fields = proof(methodId, exchangeId, token);
        const result = await deps.verification.proveAndContinue(methodId, flow.id, fields, requestFacts(req), req.log);
        return res.redirect(303, locationAfter(deps.loginRedirects, result));
      }
      const app = deps.clients.get(flow.clientId)?.name ?? flow.clientId;
      const ctx = pageOf(req, flow);
      const { t } = ctx;
      const facts = linkFactsOf(exchange.state);
      pageHeaders(res, [], undefined, ctx.brand);
      const body = html`<main class="card">
        <h1>${t.t('link.confirm.title', { app })}</h1>
        <p>${t.t('link.confirm.text', { app })}</p>
        ${facts ? linkDetails(t, facts, deps.clock.now()) : null}
        <form method="post" action="${base}${LINK_PATH.replace(':method', methodId)}">
          <input type="hidden" name="exchange_id" value="${exchangeId}" />
          <input type="hidden" name="token" value="${token}" />
          <button class="primary" name="decision" value="confirm">${t.t('link.confirm.yes')}</button>
          <button name="decision" value="deny">${t.t('link.confirm.no')}</button>
        </form>
      </main>`;
      res.send(layout(ctx, t.t('link.confirm.title', { app }), body, null));
    }),
  );

  router.post(
    LINK_PATH,
    formBody('4kb', 10),
    guarded(async (req, res, methodId, token) => {
      const body = req.body as Record<string, unknown>;
      const { exchangeId, flow } = await open(methodId, body.exchange_id);
      if (body.decision === 'deny') {
        await deps.verification.cancel(
          methodId,
          { exchange_id: exchangeId, reason: 'denied_by_link' },
          ['exchange_id', 'reason'],
          requestFacts(req),
          req.log,
        );
        return page(req, res, 200, ['link.cancelled.title', 'link.cancelled.text'], flow);
      }
      await deps.verification.verifyProof(methodId, proof(methodId, exchangeId, token), requestFacts(req), req.log);
      page(req, res, 200, ['link.confirmed.title', 'link.confirmed.text'], flow);
    }),
  );

  return router;
}
