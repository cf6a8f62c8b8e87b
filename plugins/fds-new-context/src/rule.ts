import type {
  FdsAction,
  FdsContext,
  FdsRule,
  FdsVerdict,
  JsonValue,
  RequestFacts,
  StoredEvent,
} from '@gatehouse-auth/core';
import type { NewContextOptions, SignalName } from './options.js';
import { deviceKey, hourDistance, networkPrefix, primaryLanguage } from './signals.js';

/** The rule id, also the prefix of its reasons. */
export const NEW_CONTEXT_RULE_ID = 'new_context';

const STRICTNESS: Record<FdsAction, number> = { allow: 0, step_up: 1, deny: 2 };

/**
 * The signals (in a fixed order) where the current request differs from every one of the user's
 * past successful verifications. No past events: nothing to compare with, no signals.
 */
export function detectSignals(
  request: RequestFacts,
  now: Date,
  past: StoredEvent[],
  unusualHourDistance: number,
): SignalName[] {
  if (past.length === 0) return [];
  const known = (values: (string | null)[], current: string | null) => new Set(values).has(current);
  const signals: SignalName[] = [];
  const pastDevices = past.map((e) =>
    deviceKey({ userAgent: text(e.data.userAgent), deviceId: text(e.data.deviceId) }),
  );
  if (!known(pastDevices, deviceKey(request))) signals.push('new_device');
  const pastNetworks = past.map((e) => (e.ip === null ? null : networkPrefix(e.ip)));
  if (!known(pastNetworks, networkPrefix(request.ip))) signals.push('new_network');
  const pastLanguages = past.map((e) => primaryLanguage(text(e.data.acceptLanguage)));
  if (!known(pastLanguages, primaryLanguage(request.acceptLanguage))) signals.push('new_language');
  const hour = now.getUTCHours();
  const nearest = Math.min(...past.map((e) => hourDistance(hour, e.at.getUTCHours())));
  if (nearest > unusualHourDistance) signals.push('unusual_hour');
  return signals;
}

/**
 * Compares the request with the user's latest successful verifications (any method): a new
 * device, network or language, or an unusual hour, each answered with its configured verdict.
 */
export function newContextRule(options: NewContextOptions): FdsRule {
  return {
    id: NEW_CONTEXT_RULE_ID,
    // A session used from a listed address, or a new context, must not sign in unchecked.
    checksSessions: true,
    async evaluate(ctx: FdsContext): Promise<FdsVerdict> {
      const past = await ctx.history.recent({
        types: ['verification.success'],
        userId: ctx.user.id,
        limit: options.history_size,
      });
      if (past.length < options.min_history) return { action: 'allow' };
      const signals = detectSignals(ctx.request, ctx.now, past, options.unusual_hour_distance);
      if (signals.length === 0) return { action: 'allow' };
      const action = signals
        .map((signal) => options.verdicts[signal])
        .reduce((a, b) => (STRICTNESS[b] > STRICTNESS[a] ? b : a), 'allow');
      return { action, reason: `${NEW_CONTEXT_RULE_ID}.${signals.join(',')}` };
    },
  };
}

function text(value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null;
}
