import express, { type Request, type Response, type Router } from 'express';
import { isProtocolError } from '../errors.js';
import { formBody } from '../http/parsers.js';
import type { ClientRegistry } from '../oauth/clients.js';
import type { BrowserBinding } from '../oauth/authorize/browser.js';
import type { Clock } from '../services.js';
import { requestFacts } from '../verification/context.js';
import type { ExchangeStore } from '../verification/exchanges.js';
import type { LoginFlowStore } from '../verification/flows.js';
import { locationAfter, type LoginRedirects } from '../verification/routes.js';
import { LINK_PATH, type VerificationService } from '../verification/service.js';
import { pageHeaders } from './headers.js';
import { html } from './html.js';
import { layout, renderErrorPage, renderNoticePage } from './page.js';

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
}

class LinkProblem extends Error {}

/**
 * The page a sign-in link (`processingType: LINK`) opens. In the browser that is doing the login
 * (its flow cookie) the GET verifies the exchange and the login goes on. Anywhere else it only
 * asks: a mail scanner's GET must not sign anyone in, and whoever confirms on another device
 * should see which app asks and when; the login then goes on where it started (that page polls
 * the status). "It was not me" cancels the exchange.
 */
export function magicLinkRoutes(deps: MagicLinkDeps): Router {
  const router = express.Router();
  const base = deps.issuerPath;

  const page = (res: Response, status: number, title: string, text: string) => {
    pageHeaders(res);
    res.status(status).send((status < 400 ? renderNoticePage : renderErrorPage)(base, title, text));
  };

  /** The link's exchange and login, both still live; else why the link no longer works. */
  const open = async (methodId: string, exchangeId: unknown) => {
    const exchange = typeof exchangeId === 'string' ? await deps.exchanges.find(exchangeId) : null;
    if (!exchange || exchange.method !== methodId) throw new LinkProblem('This sign-in link is not valid.');
    if (exchange.usedAt) throw new LinkProblem('This sign-in link was used already.');
    if (exchange.revokedAt) throw new LinkProblem('This sign-in was cancelled or replaced by a newer link.');
    if (exchange.expiresAt <= deps.clock.now()) throw new LinkProblem('This sign-in link has expired.');
    const flow = await deps.flows.get(exchange.flowId);
    if (!flow || flow.status !== 'active' || flow.expiresAt <= deps.clock.now()) {
      throw new LinkProblem('This sign-in is over.');
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
        if (!deps.verification.method(methodId).links || !token)
          throw new LinkProblem('This sign-in link is not valid.');
        await step(req, res, methodId, token);
      } catch (err) {
        if (err instanceof LinkProblem) return page(res, 400, 'This link does not work', err.message);
        if (isProtocolError(err)) {
          return page(res, 400, 'This link does not work', 'The link is wrong, or it was used or has expired.');
        }
        throw err;
      }
    };

  router.get(
    LINK_PATH,
    guarded(async (req, res, methodId, token) => {
      const { flow, exchangeId } = await open(methodId, req.query.exchange_id);
      if (typeof flow.params.binding === 'string' && deps.binding.isBound(req, flow)) {
        const fields = proof(methodId, exchangeId, token);
        const result = await deps.verification.proveAndContinue(methodId, flow.id, fields, requestFacts(req), req.log);
        return res.redirect(303, locationAfter(deps.loginRedirects, result));
      }
      const appName = deps.clients.get(flow.clientId)?.name ?? flow.clientId;
      pageHeaders(res);
      const body = html`<main class="card">
        <h1>Sign in to ${appName}?</h1>
        <p>
          Someone asked to sign in to ${appName} with this link. Confirm only if it was you, just now: the sign-in then
          continues on the device where you started it.
        </p>
        <form method="post" action="${base}${LINK_PATH.replace(':method', methodId)}">
          <input type="hidden" name="exchange_id" value="${exchangeId}" />
          <input type="hidden" name="token" value="${token}" />
          <button class="primary" name="decision" value="confirm">Yes, it was me</button>
          <button name="decision" value="deny">No, it was not me</button>
        </form>
      </main>`;
      res.send(layout(base, `Sign in to ${appName}?`, body, null));
    }),
  );

  router.post(
    LINK_PATH,
    formBody('4kb', 10),
    guarded(async (req, res, methodId, token) => {
      const body = req.body as Record<string, unknown>;
      const { exchangeId } = await open(methodId, body.exchange_id);
      if (body.decision === 'deny') {
        await deps.verification.cancel(
          methodId,
          { exchange_id: exchangeId, reason: 'denied_by_link' },
          ['exchange_id', 'reason'],
          requestFacts(req),
          req.log,
        );
        return page(res, 200, 'Sign-in cancelled', 'Nobody can sign in with this link any more.');
      }
      await deps.verification.verifyProof(methodId, proof(methodId, exchangeId, token), requestFacts(req), req.log);
      page(res, 200, 'Confirmed', 'Go back to the device where you started: the sign-in continues there.');
    }),
  );

  return router;
}
