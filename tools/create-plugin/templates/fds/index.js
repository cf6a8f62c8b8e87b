// @ts-check
/**
 * FDS rule __RULE_ID__: refuses sign-ins to the apps listed in `deny_clients` (and sessions reaching
 * them), for instance while an app is being investigated.
 */
import { definePlugin, z } from '@gatehouse-auth/core';

export const RULE_ID = '__RULE_ID__';

export default definePlugin({
  name: '__NAME__',
  apiVersion: '^1',
  options: z.strictObject({ deny_clients: z.array(z.string().min(1)).default([]) }).prefault({}),
  register(api, options) {
    const denied = new Set(options.deny_clients);
    api.fdsRules.add({
      id: RULE_ID,
      // Also when an existing session would sign the user in with no new proof.
      checksSessions: true,
      async evaluate(ctx) {
        return denied.has(ctx.clientId) ? { action: 'deny', reason: `${RULE_ID}.client_denied` } : { action: 'allow' };
      },
    });
  },
});
