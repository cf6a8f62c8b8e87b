import type { AuthMethod, RecordStore, RequestFacts, Services, UserRecord } from '@gatehouse-auth/plugin-api';
import type { ClientRegistry } from '../oauth/clients.js';
import type { Logger } from 'pino';
import { appMethods } from '../config/schema.js';
import type { Extensions } from '../plugins/loader.js';
import { mayBind } from './binding-rule.js';
import type { LoginFlow } from './flows.js';
import type { VerificationService } from './service.js';

/** "Not now" keeps a method from being offered again to the user for this long. */
// The hosted page says "30 days" (offer.later_note in the catalogs): change both together.
const DECLINED_SECONDS = 30 * 24 * 3600;

/**
 * After a login, a page may offer to set up a method for next time (a passkey after a password;
 * page-login's `/login/offer`, through `web.loginFlows.offer`): a method that declares `page.offer`, that the user's app lets them sign in with,
 * that this login did not use and that the user has not set up. The just-completed login is the
 * authentication for it, with the setup API's rule (binding-rule.ts): a password alone never adds
 * a credential that signs in by itself (a passkey), nor a factor for a user who has one.
 */
export class SetupOffers {
  constructor(
    private readonly deps: {
      /** The apps, the config's and those stored in the database. */
      clients: Pick<ClientRegistry, 'app' | 'apps'>;
      extensions: Extensions;
      services: Services;
      verification: Pick<VerificationService, 'isEnrolled'>;
      /** Offers the user declined ("Not now"), by user and method. */
      declined: RecordStore;
    },
  ) {}

  /** The method to offer after `flow` (completed), or null. */
  async pick(flow: LoginFlow, request: RequestFacts, logger: Logger): Promise<AuthMethod | null> {
    if (flow.status !== 'completed' || !flow.userId) return null;
    const user = await this.deps.services.users.findById(flow.userId);
    const app = this.deps.clients.app(flow.clientId);
    if (!user || user.status !== 'active' || !app) return null;
    for (const id of appMethods(app)) {
      const method = this.deps.extensions.methods.get(id);
      if (!method?.page?.offer || !method.enrollment || flow.methods.includes(id)) continue;
      if (await this.deps.declined.get(`${user.id}:${id}`)) continue;
      if (await this.deps.verification.isEnrolled(user, id, flow.clientId, request, logger)) continue;
      if (await this.mayEnrol(flow, user, method, request, logger)) return method;
    }
    return null;
  }

  /** Whether this login is enough to add `method` (binding-rule.ts, as for the setup API). */
  mayEnrol(flow: LoginFlow, user: UserRecord, method: AuthMethod, request: RequestFacts, logger: Logger) {
    return mayBind(method, flow.completions, { apps: this.deps.clients.apps() }, () =>
      this.hasSecondFactor(user, request, logger),
    );
  }

  /** Whether the user can sign in with anything besides a password (a second factor). */
  async hasSecondFactor(user: UserRecord, request: RequestFacts, logger: Logger): Promise<boolean> {
    for (const method of this.deps.extensions.methods.values()) {
      if (method.amr.every((v) => v === 'pwd')) continue;
      if (await this.deps.verification.isEnrolled(user, method.id, 'enrollment', request, logger)) return true;
    }
    return false;
  }

  async decline(userId: string, methodId: string): Promise<void> {
    await this.deps.declined.put(`${userId}:${methodId}`, {}, { ttlSeconds: DECLINED_SECONDS });
  }
}
