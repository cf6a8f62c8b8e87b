import type { Logger } from 'pino';
import type { RequestFacts, UserRecord } from '../plugins/extensions.js';
import type { Clock, Services } from '../services.js';
import { safeEqual } from '../util/crypto.js';
import type { UserService } from '../users/users.js';
import type { SetupOffers } from '../login/offer.js';
import { verificationError } from './errors.js';
import { flowClosedReason, type LoginFlow, type LoginFlowStore } from './flows.js';
import type { VerificationService } from './service.js';

/**
 * Setting a method up in the middle of a login (cidaas's `…/setup/{method}/initiation/{trackId}`):
 * a user whose app asks for a stage they have no method for sets one up, with the login so far
 * as the authentication. The track id is what an app's own login UI gets with `sub` once the
 * user is known: the flow id and a MAC of it and its stage under the server key, so it names one
 * login at one stage and dies when the stage moves on. It travels in a URL, so it is never enough
 * alone: the call must come from the browser doing the login, with the flow cookie (the UI's XHR
 * sends it with `credentials: 'include'`). Only a method of the stage to do that the user has not
 * set up, and with the setup API's rule (binding-rule.ts): a password alone never adds a
 * credential that signs in by itself (a passkey), nor a factor for a user who has one.
 */
export class LoginSetup {
  constructor(
    private readonly deps: {
      flows: LoginFlowStore;
      services: Pick<Services, 'secrets'>;
      verification: VerificationService;
      setupOffers: SetupOffers;
      users: UserService;
      clock: Clock;
    },
  ) {}

  /** The track id of the flow at its current stage. */
  trackId(flow: LoginFlow): string {
    return `${flow.id}.${this.mac(flow)}`;
  }

  private mac(flow: LoginFlow): string {
    return this.deps.services.secrets.mac(`login-setup:${flow.id}:${flow.stage}`);
  }

  /**
   * The user the login of `trackId` may set `methodId` up for, or the reason it may not.
   * `isBound` says whether the caller is the browser doing that login (it sent the flow cookie).
   */
  async userFor(
    trackId: string,
    methodId: string,
    request: RequestFacts,
    logger: Logger,
    isBound: (flow: LoginFlow) => boolean,
  ) {
    const [flowId = '', mac = ''] = trackId.split('.');
    const flow = await this.deps.flows.get(flowId);
    if (!flow) throw verificationError('REQUEST_NOT_FOUND');
    const closed = flowClosedReason(flow, this.deps.clock.now());
    if (closed) throw verificationError(closed);
    if (!safeEqual(mac, this.mac(flow))) {
      throw verificationError('FLOW_NOT_BOUND', 'the track_id is not the one of this login at its current stage');
    }
    // The track id travels in the UI's URL (history, logs, Referer): alone it proves nothing.
    if (!isBound(flow)) {
      throw verificationError(
        'FLOW_NOT_BOUND',
        'set a method up from the browser doing this login: send its cookies (credentials: include)',
      );
    }
    const user: UserRecord | null = flow.userId ? await this.deps.users.findById(flow.userId) : null;
    if (!user || user.status !== 'active') {
      throw verificationError('SETUP_NOT_ALLOWED', 'complete the first stage of the sign-in first');
    }
    const method = this.deps.verification.method(methodId);
    if (!flow.stages[flow.stage]?.includes(method.id)) {
      throw verificationError('METHOD_NOT_ENABLED', 'the stage to do has no such method');
    }
    if (await this.deps.verification.isEnrolled(user, method.id, flow.clientId, request, logger)) {
      throw verificationError('SETUP_NOT_ALLOWED', 'the method is set up already; use it');
    }
    if (!(await this.deps.setupOffers.mayEnrol(flow, user, method, request, logger))) {
      throw verificationError(
        'SETUP_NOT_ALLOWED',
        'this sign-in has proved only a password: it cannot add a way to sign in on its own, nor a second factor beside one you have',
      );
    }
    return user;
  }
}
