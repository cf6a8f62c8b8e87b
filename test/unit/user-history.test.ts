/**
 * The FDS rules' shared history (issue 15): answers from one read of the user's events only
 * when that read holds the whole answer, otherwise asks the store; what is recorded through it
 * is seen by later questions.
 */
import { expect } from 'chai';
import type { EventQuery, History, StoredEvent } from '@gatehouse-auth/core';
import { UserHistorySnapshot } from '../../core/dist/verification/user-history.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');

function event(i: number, type: string, userId = 'u1', ip = '10.0.0.1'): StoredEvent {
  return {
    id: `e${i}`,
    at: new Date(T0 - i * 1000),
    count: 1,
    type,
    key: null,
    userId,
    method: 'TOTP',
    clientId: 'app',
    ip,
    outcome: null,
    reason: null,
    data: {},
  };
}

/** An in-memory store that counts the questions it was asked. */
function store(events: StoredEvent[]) {
  const asked: EventQuery[] = [];
  const pick = (q: EventQuery) =>
    events.filter(
      (e) =>
        (!q.types || q.types.includes(e.type)) &&
        (q.userId === undefined || e.userId === q.userId) &&
        (q.ip === undefined || e.ip === q.ip) &&
        (q.since === undefined || e.at >= q.since),
    );
  const history: History = {
    count: async (q) => (asked.push(q), pick(q).slice(0, q.limit ?? Infinity).length),
    recent: async (q) => (asked.push(q), pick(q).slice(0, q.limit ?? 100)),
  };
  return { history, asked };
}

describe('UserHistorySnapshot', () => {
  const failures = (n: number) => Array.from({ length: n }, (_, i) => event(i, 'verification.failure'));

  it('answers user-scoped questions from one read when it holds every event of the user', async () => {
    const s = store(failures(5));
    const h = new UserHistorySnapshot(s.history, 'u1', new Date(T0), 10);
    expect(await h.count({ types: ['verification.failure'], userId: 'u1' })).to.equal(5);
    expect(await h.count({ types: ['verification.success'], userId: 'u1' })).to.equal(0);
    expect((await h.recent({ userId: 'u1', limit: 2 })).map((e) => e.id)).to.deep.equal(['e0', 'e1']);
    expect(s.asked).to.have.length(1);
  });

  it('a full read answers what lies within its reach, and asks the store beyond it', async () => {
    const s = store(failures(30));
    const h = new UserHistorySnapshot(s.history, 'u1', new Date(T0), 10);
    // Newer than the oldest of the ten read: answered.
    expect(await h.count({ types: ['verification.failure'], userId: 'u1', since: new Date(T0 - 5500) })).to.equal(6);
    // At most 3, newest first: answered.
    expect(await h.count({ userId: 'u1', limit: 3 })).to.equal(3);
    expect(s.asked).to.have.length(1);
    // All of them: beyond the read, so the store answers (30, not 10).
    expect(await h.count({ types: ['verification.failure'], userId: 'u1' })).to.equal(30);
    expect(s.asked).to.have.length(2);
  });

  it('asks the store about other users and addresses, once per question until those events change', async () => {
    const s = store([...failures(3), event(9, 'verification.failure', 'u2')]);
    const h = new UserHistorySnapshot(s.history, 'u1', new Date(T0), 10);
    const byIp = { types: ['verification.failure'], ip: '10.0.0.1' };
    expect(await h.count(byIp)).to.equal(4);
    expect(await h.count(byIp)).to.equal(4);
    expect(s.asked).to.have.length(1);
    const recorded: string[] = [];
    const log = h.recording({ record: async (e) => void recorded.push(e.type) }, () => new Date(T0 + 1000));
    await log.record({ type: 'fds.verdict', userId: 'u1' });
    expect(await h.count(byIp)).to.equal(4);
    expect(s.asked, 'another type leaves the answer standing').to.have.length(1);
    await log.record({ type: 'verification.failure', userId: 'u1', ip: '10.0.0.1' });
    await h.count(byIp);
    expect(s.asked, 'its own type asks again').to.have.length(2);
    expect(recorded).to.deep.equal(['fds.verdict', 'verification.failure']);
  });

  it('sees what was recorded through it after its read, newest first', async () => {
    const s = store(failures(2));
    const h = new UserHistorySnapshot(s.history, 'u1', new Date(T0), 10);
    expect(await h.count({ types: ['verification.success'], userId: 'u1' })).to.equal(0);
    const log = h.recording({ record: async () => undefined }, () => new Date(T0 + 1000));
    await log.recordMany!([{ type: 'verification.success', userId: 'u1' }]);
    expect(await h.count({ types: ['verification.success'], userId: 'u1' })).to.equal(1);
    expect((await h.recent({ userId: 'u1', limit: 1 }))[0]!.type).to.equal('verification.success');
    expect(s.asked).to.have.length(1);
  });
});
