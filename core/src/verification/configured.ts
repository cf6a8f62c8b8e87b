import type { Logger } from 'pino';
import type { AppConfig } from '../config/schema.js';
import type { Extensions } from '../plugins/loader.js';
import type { JsonObject, RequestFacts, UserRecord } from '../plugins/extensions.js';
import type { Services } from '../services.js';
import { verificationError } from './errors.js';
import type { LoginFlow } from './flows.js';
import { namedIdentifier } from './context.js';

/**
 * Which methods of the stage to do a user has set up (cidaas's "configured list"), for an app's
 * own login UI to show the right choices. Once the flow knows its user, the answer is the truth.
 * Before (the first stage, named by an identifier), it must not tell whether the account exists
 * (decision 7): an unknown or disabled identifier gets a plausible answer instead, the same
 * every time for that identifier — the stage's methods chosen by an HMAC of it under the server
 * key, a password always among them where the stage has one, no mediums (as most real accounts
 * have none beyond their primary address). The lookups are the same for both. A method listed
 * for a phantom then fails at verification like a wrong proof, as every first stage does.
 */
export class ConfiguredMethods {
  constructor(
    private readonly deps: {
      extensions: Extensions;
      services: Services;
    },
  ) {}

  async list(
    flow: LoginFlow,
    app: AppConfig,
    fields: Record<string, string>,
    request: RequestFacts,
    logger: Logger,
  ): Promise<JsonObject[]> {
    const stage = (flow.stages[flow.stage] ?? []).filter((id) => this.deps.extensions.methods.has(id));
    const { user, identifier } = await this.who(flow, fields);
    const real: JsonObject[] = [];
    for (const id of stage) {
      const method = this.deps.extensions.methods.get(id)!;
      const credentials = this.deps.services.credentials(user?.id ?? 'nobody', id);
      const ctx = { user: user ?? this.nobody(), credentials, request, clientId: app.client_id, logger };
      if (!(await method.isEnrolled(ctx))) continue;
      const mediums = (await credentials.list()).filter((c) => c.label).map((c) => ({ id: c.id, text: c.label }));
      real.push({ type: id, mediums });
    }
    if (user && user.status === 'active') return real;
    return this.plausible(stage, identifier);
  }

  /** The flow's user, or the one the identifier names (first stage); `sub` must match a known flow user. */
  private async who(flow: LoginFlow, fields: Record<string, string>) {
    const users = this.deps.services.users;
    if (flow.userId) {
      if (fields.sub && fields.sub !== flow.userId)
        throw verificationError('INVALID_FIELD', 'sub does not match the login');
      return { user: await users.findById(flow.userId), identifier: flow.userId };
    }
    const identifier = fields.sub ?? namedIdentifier(fields);
    if (!identifier) {
      throw verificationError('FIELD_MISSING', 'one of email, mobile, username or sub is required', {
        fields: ['email', 'mobile', 'username', 'sub'],
      });
    }
    const user = fields.sub ? await users.findById(identifier) : await users.findByIdentifier(identifier);
    return { user, identifier };
  }

  private plausible(stage: string[], identifier: string): JsonObject[] {
    const seed = Buffer.from(this.deps.services.secrets.mac(`configured:${identifier.toLowerCase()}`), 'base64url');
    const picked = stage.filter((id, i) => {
      const method = this.deps.extensions.methods.get(id)!;
      return method.amr.includes('pwd') || (seed[i % seed.length]! & 1) === 1;
    });
    return (picked.length ? picked : stage.slice(0, 1)).map((id) => ({ type: id, mediums: [] }));
  }

  /** Stands in for an unknown user, so that both cases do the same lookups. */
  private nobody(): UserRecord {
    return { id: 'nobody', username: '', email: null, phone: null, status: 'disabled' };
  }
}
