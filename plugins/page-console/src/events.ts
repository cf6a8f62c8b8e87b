import type { StoredEvent } from '@gatehouse-auth/core';

/** An event as the console lists it: with the FDS rule verdicts that came just before it. */
export interface EventRow extends StoredEvent {
  verdicts: StoredEvent[];
}

/** Verdicts belong to the event they led to when they are this close to it (ms). */
const SAME_STEP_MS = 5_000;

/**
 * Folds each run of `fds.verdict` events under the event they led to (newest first: the
 * verification step comes before its verdicts in the list): one row per verification with its
 * rules' verdicts, instead of one row per rule (issue 29). A verdict of another method, app or
 * address, or too far apart, stays a row of its own.
 */
export function foldVerdicts(events: readonly StoredEvent[]): EventRow[] {
  const rows: EventRow[] = [];
  for (const event of events) {
    const owner = rows.at(-1);
    if (event.type === 'fds.verdict' && owner && owner.type !== 'fds.verdict' && sameStep(owner, event)) {
      owner.verdicts.push(event);
    } else {
      rows.push({ ...event, verdicts: [] });
    }
  }
  return rows;
}

function sameStep(owner: StoredEvent, verdict: StoredEvent): boolean {
  return (
    owner.method === verdict.method &&
    owner.clientId === verdict.clientId &&
    owner.ip === verdict.ip &&
    Math.abs(owner.at.getTime() - verdict.at.getTime()) <= SAME_STEP_MS
  );
}
