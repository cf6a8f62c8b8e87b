import type { StoredEvent } from '@gatehouse-auth/core';

/** An event as the console lists it: with the FDS rule verdicts of its step. */
export interface EventRow extends StoredEvent {
  verdicts: StoredEvent[];
}

const VERDICT = 'fds.verdict';

/** Verdicts stored before they named their step: folded by time when this close (ms). */
const LEGACY_SAME_STEP_MS = 5_000;

/**
 * One row per step instead of one per FDS rule (issue 29). The verdicts of a step (the same
 * `data.step`) fold under the event the step ended with (a verification's success or failure,
 * an initiation, `verification.blocked`), wherever the list has them. A step with no such event
 * listed (an allowed first-stage initiation, a session check) is one row: its newest verdict,
 * with all of its verdicts under it. Verdicts stored before steps were named fold by the old
 * rule: under the event just above them, of the same method, app and address, close in time.
 */
export function foldVerdicts(events: readonly StoredEvent[]): EventRow[] {
  const ended = new Map<string, EventRow>();
  for (const event of events) {
    const step = stepOf(event);
    if (step && event.type !== VERDICT && !ended.has(step)) ended.set(step, { ...event, verdicts: [] });
  }
  const rows: EventRow[] = [];
  for (const event of events) {
    const step = stepOf(event);
    if (event.type !== VERDICT) {
      const row = step ? ended.get(step) : undefined;
      rows.push(row?.id === event.id ? row : { ...event, verdicts: [] });
    } else if (step) {
      let owner = ended.get(step);
      if (!owner) {
        owner = { ...event, verdicts: [] };
        ended.set(step, owner);
        rows.push(owner);
      }
      owner.verdicts.push(event);
    } else {
      const above = rows.at(-1);
      if (above && above.type !== VERDICT && !stepOf(above) && legacySameStep(above, event)) above.verdicts.push(event);
      else rows.push({ ...event, verdicts: [] });
    }
  }
  return rows;
}

function stepOf(event: StoredEvent): string | null {
  return typeof event.data.step === 'string' ? event.data.step : null;
}

function legacySameStep(owner: StoredEvent, verdict: StoredEvent): boolean {
  return (
    owner.method === verdict.method &&
    owner.clientId === verdict.clientId &&
    owner.ip === verdict.ip &&
    Math.abs(owner.at.getTime() - verdict.at.getTime()) <= LEGACY_SAME_STEP_MS
  );
}
