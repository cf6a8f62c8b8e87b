import {
  routeInput,
  verificationError,
  type JsonObject,
  type LoginFlowView,
  type PluginApi,
  type RequestFacts,
  type RouteSpec,
  type UserRecord,
  answerSuccess,
  textFields,
} from '@gatehouse-auth/core';
import type { Request } from 'express';
import { CIDAAS_API } from './api.js';
import { logOf, type Logger, type RouteGroupInput } from './http.js';

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
  constructor(private readonly api: Pick<PluginApi, 'services' | 'web'>) {}

  async list(flow: LoginFlowView, fields: Record<string, string>, request: RequestFacts, logger: Logger) {
    const { services } = this.api;
    const stage = this.api.web.loginFlows.stageMethods(flow);
    const { user, identifier } = await this.who(flow, fields);
    const real: JsonObject[] = [];
    for (const method of stage) {
      const credentials = services.credentials(user?.id ?? 'nobody', method.id);
      const ctx = { user: user ?? nobody(), credentials, request, clientId: flow.clientId, logger };
      if (!(await method.isEnrolled(ctx))) continue;
      const mediums = (await credentials.list()).filter((c) => c.label).map((c) => ({ id: c.id, text: c.label }));
      real.push({ type: method.id, mediums });
    }
    if (user && user.status === 'active') return real;
    const seed = Buffer.from(services.secrets.mac(`configured:${identifier.toLowerCase()}`), 'base64url');
    const picked = stage.filter((method, i) => method.amr.includes('pwd') || (seed[i % seed.length]! & 1) === 1);
    return (picked.length ? picked : stage.slice(0, 1)).map((method) => ({ type: method.id, mediums: [] }));
  }

  /** The flow's user, or the one the identifier names (first stage); `sub` must match a known flow user. */
  private async who(flow: LoginFlowView, fields: Record<string, string>) {
    const users = this.api.services.users;
    if (flow.userId) {
      if (fields.sub && fields.sub !== flow.userId)
        throw verificationError('INVALID_FIELD', 'sub does not match the login');
      return { user: await users.findById(flow.userId), identifier: flow.userId };
    }
    const identifier =
      fields.sub ?? fields.identifier ?? fields.email ?? fields.mobile_number ?? fields.mobile ?? fields.username;
    if (!identifier) {
      throw verificationError('FIELD_MISSING', 'one of email, mobile, username or sub is required', {
        fields: ['email', 'mobile', 'username', 'sub'],
      });
    }
    const user = fields.sub ? await users.findById(identifier) : await users.findByIdentifier(identifier);
    return { user, identifier };
  }
}

/** Stands in for an unknown user, so that both cases do the same lookups. */
function nobody(): UserRecord {
  return { id: 'nobody', username: '', email: null, phone: null, status: 'disabled' };
}

/** `/verification-srv/public/graph/user/setup` and `…/v2/setup/public/configured/check/{method}`. */
export function configuredRoutes({ api, router }: RouteGroupInput): RouteSpec[] {
  const { services, web } = api;
  const configured = new ConfiguredMethods(api);
  const json = services.http.json();
  const form = services.http.form();
  const listOf = async (req: Request, fields: Record<string, string>) => {
    const flow = await web.loginFlows.open(fields.request_id);
    return configured.list(flow, fields, web.requestFacts(req), logOf(req, api));
  };

  router.post(CIDAAS_API.configuredList.path, json, form, async (req, res) => {
    const fields = textFields(routeInput(CIDAAS_API.configuredList, req).body);
    answerSuccess(res, { configured_list: await listOf(req, fields) });
  });
  router.post(CIDAAS_API.configuredCheck.path, json, form, async (req, res) => {
    const fields = textFields(routeInput(CIDAAS_API.configuredCheck, req).body);
    const method = web.loginFlows.method(String(req.params.method)).id;
    const list = await listOf(req, fields);
    answerSuccess(res, { type: method, configured: list.some((m) => m.type === method) });
  });
  return [CIDAAS_API.configuredList, CIDAAS_API.configuredCheck];
}
