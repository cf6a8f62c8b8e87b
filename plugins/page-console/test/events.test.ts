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

describe('the console folds FDS verdicts under their verification (issue 29)', () => {
  it('one row per verification, its rules under it; newest first as the history gives them', () => {
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
