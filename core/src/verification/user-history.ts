import type { EventLog, EventQuery, History, NewEvent, StoredEvent } from '@gatehouse-auth/plugin-api';
import { randomUUID } from 'node:crypto';
import { eventColumns } from '../storage/stores.js';

/** An event as the log stores it when it is first recorded (a new row: count 1, a new id). */
export function storedEvent(e: NewEvent, at: Date): StoredEvent {
  return { id: randomUUID(), at, count: 1, ...eventColumns(e), data: e.data ?? {} };
}

/** How many of a user's newest events one read brings. */
const SNAPSHOT_SIZE = 300;

/**
 * The history the FDS rules of one request share: the user's newest events, read once (the
 * rules asked for them one query at a time: five of the six queries of a phase), answering
 * every user-scoped question it holds the whole answer to; anything else goes to the store.
 * Events recorded through `recording()` are added to it, so a later phase of the same request
 * (the attempt guard, then the verification) sees them as a fresh read would.
 */
export class UserHistorySnapshot implements History {
  private rows: Promise<StoredEvent[]> | null = null;
  /** Other questions asked again in this request (the per-address count of each phase). */
  private readonly asked = new Map<string, { types?: string[]; answer: Promise<unknown> }>();

  constructor(
    private readonly store: History,
    private readonly userId: string,
    /** The request's time, the `now` of each of its phases (so their questions are the same). */
    readonly now: Date,
    private readonly size = SNAPSHOT_SIZE,
  ) {}

  /** `events`, plus this snapshot kept up to date with what is recorded through it. */
  recording(events: EventLog, now: () => Date): EventLog {
    const remember = (list: NewEvent[]) => {
      // An answer kept for a question about these events' types is stale now.
      const types = new Set(list.map((e) => e.type));
      for (const [key, q] of this.asked) if (!q.types || q.types.some((t) => types.has(t))) this.asked.delete(key);
      if (!this.rows) return; // not read yet: a read will see them
      const at = now();
      const mine = list
        .filter((e) => e.userId === this.userId && !e.aggregateSeconds)
        .map((e) => storedEvent(e, at))
        .reverse();
      // Newest first, and still at most `size` (a full snapshot stays honest about its reach).
      const rows = this.rows;
      this.rows = rows.then((r) => [...mine, ...r].slice(0, this.size));
    };
    return {
      record: async (e) => {
        await events.record(e);
        remember([e]);
      },
      recordMany: async (list) => {
        if (events.recordMany) await events.recordMany(list);
        else for (const e of list) await events.record(e);
        remember(list);
      },
    };
  }

  async count(q: EventQuery): Promise<number> {
    const rows = await this.answer(q);
    if (!rows) return this.once('count', q, () => this.store.count(q));
    return (q.limit ? rows.slice(0, q.limit) : rows).reduce((sum, e) => sum + e.count, 0);
  }

  async recent(q: EventQuery): Promise<StoredEvent[]> {
    const rows = await this.answer(q);
    if (!rows) return this.once('recent', q, () => this.store.recent(q));
    return rows.slice(0, Math.min(q.limit ?? 100, 10_000));
  }

  /** The store's answer, asked once per request and question (until its events change). */
  private once<T>(kind: string, q: EventQuery, ask: () => Promise<T>): Promise<T> {
    const key = JSON.stringify([kind, q]);
    const kept = this.asked.get(key);
    if (kept) return kept.answer as Promise<T>;
    const answer = ask();
    this.asked.set(key, { ...(q.types ? { types: q.types } : {}), answer });
    answer.catch(() => this.asked.delete(key));
    return answer;
  }

  /** The matching events, newest first, when the snapshot holds the whole answer; else null. */
  private async answer(q: EventQuery): Promise<StoredEvent[] | null> {
    if (q.userId !== this.userId) return null;
    const rows = await (this.rows ??= this.store.recent({ userId: this.userId, limit: this.size }));
    const matching = rows.filter((e) => matches(e, q));
    // Every event of the user; or every one since q.since (the snapshot reaches further back);
    // or, newest first, at least as many as asked for.
    const oldest = rows.at(-1)?.at.getTime();
    const covered =
      rows.length < this.size ||
      (q.since !== undefined && oldest !== undefined && q.since.getTime() > oldest) ||
      (q.limit !== undefined && matching.length >= q.limit);
    return covered ? matching : null;
  }
}

function matches(e: StoredEvent, q: EventQuery): boolean {
  return (
    (!q.types?.length || q.types.includes(e.type)) &&
    (q.key === undefined || e.key === q.key) &&
    (q.userId === undefined || e.userId === q.userId) &&
    (q.method === undefined || e.method === q.method) &&
    (q.ip === undefined || e.ip === q.ip) &&
    (q.since === undefined || e.at.getTime() >= q.since.getTime())
  );
}
