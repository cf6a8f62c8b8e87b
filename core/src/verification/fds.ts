import type { EventLog, FdsContext, FdsRule, FdsVerdict, NewEvent } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import { NO_TRACING, type Tracing } from '../observability/tracing.js';
import { withTimeout } from '../util/timeout.js';

const SEVERITY = { allow: 0, step_up: 1, deny: 2 } as const;

export interface FdsResult {
  action: FdsVerdict['action'];
  reasons: string[];
  retryAfter?: number;
}

/** One rule's verdict; a rule that throws, times out or answers no valid verdict denies. */
async function verdictOf(
  rule: FdsRule,
  ctx: FdsContext,
  opts: { timeoutMs: number; logger: Logger },
): Promise<FdsVerdict> {
  try {
    const verdict = await withTimeout(
      rule.evaluate(ctx),
      opts.timeoutMs,
      `FDS rule ${rule.id} timed out after ${opts.timeoutMs} ms`,
    );
    if (!verdict || !(verdict.action in SEVERITY)) throw new Error(`rule ${rule.id} returned no valid verdict`);
    return verdict;
  } catch (err) {
    opts.logger.error({ err, rule: rule.id }, 'FDS rule failed; failing closed');
    return { action: 'deny', reason: `fds.rule_error:${rule.id}` };
  }
}

/**
 * Runs the FDS rules in their configured order. Every verdict is stored as an event (all of a
 * phase in one statement, after the rules ran), with the step's id (`data.step`) when given: the
 * event the step ends with carries it too, so the console folds the verdicts under it. A rule
 * that throws or exceeds the time limit counts as deny (fail closed). The first deny stops.
 */
export async function runFdsRules(
  rules: FdsRule[],
  ctx: FdsContext,
  events: EventLog,
  opts: {
    timeoutMs: number;
    logger: Logger;
    metrics?: Pick<Metrics, 'fdsVerdict'>;
    tracing?: Tracing;
    step?: string;
  },
): Promise<FdsResult> {
  const result: FdsResult = { action: 'allow', reasons: [] };
  const tracing = opts.tracing ?? NO_TRACING;
  const verdicts: NewEvent[] = [];
  for (const rule of rules) {
    const attributes = { 'gatehouse.fds.rule': rule.id, 'gatehouse.fds.phase': ctx.phase };
    const verdict = await tracing.span('fds.rule', attributes, async (span) => {
      const verdict = await verdictOf(rule, ctx, opts);
      span.setAttribute('gatehouse.fds.action', verdict.action);
      return verdict;
    });
    opts.metrics?.fdsVerdict(rule.id, ctx.phase, verdict.action);
    verdicts.push({
      type: 'fds.verdict',
      userId: ctx.user.id,
      method: ctx.method,
      clientId: ctx.clientId,
      ip: ctx.request.ip,
      outcome: verdict.action,
      reason: verdict.reason ?? null,
      data: {
        rule: rule.id,
        phase: ctx.phase,
        ...(opts.step ? { step: opts.step } : {}),
        ...(verdict.retryAfter ? { retryAfter: verdict.retryAfter } : {}),
      },
    });
    if (SEVERITY[verdict.action] > SEVERITY[result.action]) result.action = verdict.action;
    if (verdict.action !== 'allow') result.reasons.push(verdict.reason ?? rule.id);
    if (verdict.retryAfter) result.retryAfter = Math.max(result.retryAfter ?? 0, verdict.retryAfter);
    if (verdict.action === 'deny') break;
  }
  if (events.recordMany) await events.recordMany(verdicts);
  else for (const e of verdicts) await events.record(e);
  return result;
}
