import type {
  Clock,
  LoginContinuation,
  LoginFlowView,
  SignInLink,
  SignInLinkAnswered,
  SignInLinkOpened,
  SignInLinkProblem,
} from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import { isProtocolError } from '../errors.js';
import type { BrowserBinding } from '../oauth/authorize/browser.js';
import { requestFacts } from '../verification/context.js';
import type { ExchangeStore } from '../verification/exchanges.js';
import type { LoginFlow, LoginFlowStore } from '../verification/flows.js';
import { linkFactsOf } from '../verification/link-facts.js';
import type { ContinueResult, VerificationService } from '../verification/service.js';

export interface SignInLinksDeps {
  verification: Pick<VerificationService, 'method' | 'proveAndContinue' | 'verifyProof' | 'cancel'>;
  exchanges: Pick<ExchangeStore, 'find'>;
  flows: Pick<LoginFlowStore, 'get'>;
  binding: Pick<BrowserBinding, 'isBound'>;
  clock: Clock;
}

/** Why a link does not work: thrown by a check, answered as `refused`. */
class LinkProblem extends Error {
  constructor(readonly problem: SignInLinkProblem) {
    super(problem);
  }
}

/**
 * What the page a sign-in link (`processingType: LINK`) opens may do with it (decision 66): the
 * page is a plugin's, every check of the link is here. In the browser that is doing the login
 * (its flow cookie) opening the link verifies the exchange and the login goes on. Anywhere else
 * it only asks: a mail scanner's GET must not sign anyone in, and whoever confirms on another
 * device sees which app asks, the browser that started it, when, and a number to compare with
 * the starting screen's; the login then goes on where it started (that page polls the status).
 * "It was not me" cancels the exchange.
 */
export class SignInLinks {
  constructor(
    private readonly deps: SignInLinksDeps,
    private readonly views: {
      view(flow: LoginFlow): LoginFlowView;
      continuation(result: ContinueResult): LoginContinuation;
    },
  ) {}

  open(req: IncomingMessage, link: SignInLink): Promise<SignInLinkOpened> {
    return refusing<SignInLinkOpened>(async () => {
      const { flow, exchange, proof } = await this.live(link);
      // Only the browser holding the flow's cookie moves the login on from here; a flow without
      // a browser binding (an API caller's) has no such browser.
      if (typeof flow.params.binding === 'string' && this.deps.binding.isBound(req, flow)) {
        const result = await this.deps.verification.proveAndContinue(
          exchange.method,
          flow.id,
          proof,
          requestFacts(req),
          req.log,
        );
        return { outcome: 'continued', continuation: this.views.continuation(result) };
      }
      return { outcome: 'confirm', flow: this.views.view(flow), facts: linkFactsOf(exchange.state) };
    });
  }

  answer(req: IncomingMessage, link: SignInLink, answer: 'confirm' | 'deny'): Promise<SignInLinkAnswered> {
    return refusing<SignInLinkAnswered>(async () => {
      // A GET (a mail scanner's, a prefetch) never answers: the page's form posts.
      if (req.method !== 'POST') throw new LinkProblem('invalid');
      const { flow, exchange, proof } = await this.live(link);
      const facts = requestFacts(req);
      if (answer === 'deny') {
        const fields = { exchange_id: proof.exchange_id!, reason: 'denied_by_link' };
        await this.deps.verification.cancel(exchange.method, fields, ['exchange_id', 'reason'], facts, req.log);
        return { outcome: 'denied', flow: this.views.view(flow) };
      }
      await this.deps.verification.verifyProof(exchange.method, proof, facts, req.log);
      return { outcome: 'confirmed', flow: this.views.view(flow) };
    });
  }

  /** The link's exchange and login, both still live, and its proof; else why the link no longer works. */
  private async live(link: SignInLink) {
    const methodId = String(link.method).toUpperCase();
    const { exchangeId, token } = link;
    if (!this.deps.verification.method(methodId).links || typeof token !== 'string' || !token) {
      throw new LinkProblem('invalid');
    }
    const exchange = typeof exchangeId === 'string' ? await this.deps.exchanges.find(exchangeId) : null;
    if (!exchange || exchange.method !== methodId) throw new LinkProblem('invalid');
    if (exchange.usedAt) throw new LinkProblem('used');
    if (exchange.revokedAt) throw new LinkProblem('revoked');
    if (exchange.expiresAt <= this.deps.clock.now()) throw new LinkProblem('expired');
    const flow = await this.deps.flows.get(exchange.flowId);
    if (!flow || flow.status !== 'active' || flow.expiresAt <= this.deps.clock.now()) {
      throw new LinkProblem('over');
    }
    // The link's proof: its token in the method's one verify field.
    const field = this.deps.verification.method(methodId).verifyFields[0]!;
    const proof: Record<string, string> = { exchange_id: exchangeId as string, [field]: token };
    return { exchange, flow, proof };
  }
}

/** Runs a step of a link; a check's or the verification's refusal is an answer, never an error. */
async function refusing<T extends { outcome: string }>(
  step: () => Promise<T>,
): Promise<T | { outcome: 'refused'; problem: SignInLinkProblem }> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof LinkProblem) return { outcome: 'refused', problem: err.problem };
    if (isProtocolError(err)) return { outcome: 'refused', problem: 'refused' };
    throw err;
  }
}
