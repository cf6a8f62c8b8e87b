import { expect } from 'chai';
import type { StoredEvent } from '@gatehouse-auth/core';
import { foldVerdicts } from '../src/events.js';

let serial = 0;
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, seconds));
function event(type: string, seconds: number, extra: Partial<StoredEvent> = {}): StoredEvent {
  serial += 1;
  return {
    id: `e${serial}`,
    at: at(seconds),
    count: 1,
    type,
    key: null,
    userId: 'u1',
    method: 'PASSWORD',
    clientId: 'shop',
    ip: '192.0.2.1',
    outcome: null,
    reason: null,
    data: {},
    ...extra,
  };
}
const verdict = (rule: string, seconds: number, extra: Partial<StoredEvent> = {}) =>
  event('fds.verdict', seconds, { outcome: 'allow', data: { rule }, ...extra });

const stepped = (step: string) => ({ data: { step } });

describe('the console folds FDS verdicts under their verification (issue 29)', () => {
  it("folds a step's verdicts under the event it ended with, by the step's id, wherever they are listed", () => {
    const rows = foldVerdicts([
      // Same millisecond, stored out of order: the verdicts of s2 come before and after its event.
      verdict('fds-velocity', 30, { data: { rule: 'fds-velocity', step: 's2' } }),
      event('verification.success', 30, stepped('s2')),
      verdict('fds-new-context', 30, { data: { rule: 'fds-new-context', step: 's2' } }),
      // A deny of another step at the same time, method, app and address: not s2's.
      verdict('fds-ip-list', 30, { outcome: 'deny', data: { rule: 'fds-ip-list', step: 's1' } }),
      event('verification.failure', 30, { reason: 'fds:blocked', ...stepped('s1') }),
    ]);
    expect(rows.map((r) => [r.type, r.verdicts.map((v) => v.data.rule)])).to.deep.equal([
      ['verification.success', ['fds-velocity', 'fds-new-context']],
      ['verification.failure', ['fds-ip-list']],
    ]);
  });

  it("folds a blocked step's verdicts under its verification.blocked event", () => {
    const rows = foldVerdicts([
      event('verification.blocked', 12, { outcome: 'deny', reason: 'fds:ip_blocked', ...stepped('b1') }),
      verdict('fds-ip-list', 12, { outcome: 'deny', data: { rule: 'fds-ip-list', step: 'b1' } }),
      verdict('fds-velocity', 12, { data: { rule: 'fds-velocity', step: 'b1' } }),
      event('verification.failure', 11, stepped('f1')),
    ]);
    expect(rows.map((r) => [r.type, r.id, r.verdicts.map((v) => v.data.rule)])).to.deep.equal([
      ['verification.blocked', rows[0]!.id, ['fds-ip-list', 'fds-velocity']],
      ['verification.failure', rows[1]!.id, []],
    ]);
  });

  it('makes a step with no event of its own one row: its newest verdict, all of its verdicts under it', () => {
    const rows = foldVerdicts([
      verdict('fds-new-context', 40, { data: { rule: 'fds-new-context', step: 'i1' } }),
      event('login.stage_completed', 40),
      verdict('fds-velocity', 40, { data: { rule: 'fds-velocity', step: 'i1' } }),
    ]);
    expect(rows.map((r) => [r.type, r.verdicts.map((v) => v.data.rule)])).to.deep.equal([
      ['fds.verdict', ['fds-new-context', 'fds-velocity']],
      ['login.stage_completed', []],
    ]);
  });

  it("never folds a named step's verdict by time under another event, nor a stepless one under a step's", () => {
    const rows = foldVerdicts([
      event('verification.success', 30, stepped('s9')),
      verdict('fds-velocity', 30),
      event('verification.failure', 20),
      verdict('fds-velocity', 20, { data: { rule: 'fds-velocity', step: 's8' } }),
    ]);
    expect(rows.map((r) => [r.type, r.verdicts.length])).to.deep.equal([
      ['verification.success', 0],
      ['fds.verdict', 0],
      ['verification.failure', 0],
      ['fds.verdict', 1],
    ]);
  });

  it('events stored before steps were named: one row per verification, its rules under it; newest first as the history gives them', () => {
    const rows = foldVerdicts([
      event('verification.success', 30),
      verdict('fds-velocity', 30),
      verdict('fds-new-context', 29),
      event('verification.failure', 10),
      verdict('fds-velocity', 10),
    ]);
    expect(rows.map((r) => [r.type, r.verdicts.map((v) => v.data.rule)])).to.deep.equal([
      ['verification.success', ['fds-velocity', 'fds-new-context']],
      ['verification.failure', ['fds-velocity']],
    ]);
  });

  it('keeps a verdict of another method, app or address, or far apart, as a row of its own', () => {
    const rows = foldVerdicts([
      event('verification.success', 50),
      verdict('a', 50, { method: 'TOTP' }),
      verdict('b', 50, { clientId: 'blog' }),
      verdict('c', 50, { ip: '198.51.100.7' }),
      verdict('d', 20),
    ]);
    expect(rows.map((r) => [r.type, r.verdicts.length])).to.deep.equal([
      ['verification.success', 0],
      ['fds.verdict', 0],
      ['fds.verdict', 0],
      ['fds.verdict', 0],
      ['fds.verdict', 0],
    ]);
  });

  it('never folds verdicts under a verdict, and leaves the events it was given alone', () => {
    const events = [verdict('a', 5), verdict('b', 5)];
    const rows = foldVerdicts(events);
    expect(rows).to.have.length(2);
    expect(events[0]).not.to.have.property('verdicts');
  });
});
