/**
 * Plugin API 1.3 `api.securityEvents` (issue 26): the core tells plugins of security events after
 * the fact. A listener that fails is logged and changes no answer, the other listeners still hear
 * the event, and nothing is told of the phantom user of an unknown identifier.
 */
import path from 'node:path';
import { expect } from 'chai';
import type { SecurityEvent } from '@gatehouse-auth/core';
import { REPO_ROOT } from '../support/paths.js';
import {
  SCRIPTED_FDS,
  atStageTwo,
  enrolTotp,
  expectError,
  initiate,
  passwordUser,
  resetVerdict,
  scriptedVerdict,
  sentMessages,
} from '../verification/steps.js';
import { defaultPlugins, startVerificationApp, type VerificationApp } from '../verification/support.js';

const LISTENER = path.join(REPO_ROOT, 'test/fixtures/plugins/security-listener.js');

describe('security events for plugins (plugin API 1.3)', function () {
  this.timeout(20_000);
  let v: VerificationApp;
  let heard: SecurityEvent[];

  before(async () => {
    ({ heard } = (await import(LISTENER)) as { heard: SecurityEvent[] });
    v = await startVerificationApp({
      plugins: [...defaultPlugins(), { path: SCRIPTED_FDS }, { path: LISTENER }],
      verification: { fds_rules: ['scripted'] },
      notifications: { email_channel: 'capture' },
    });
  });
  after(() => v?.close());
  beforeEach(() => resetVerdict());

  it('a listener that throws: the answer is still 403 FDS_BLOCKED, and the notices plugin still tells the user', async () => {
    const user = await passwordUser(v, 'listened');
    await enrolTotp(v, user.id);
    const requestId = await atStageTwo(v, user);
    (await scriptedVerdict()).next = { action: 'deny', reason: 'impossible_travel' };
    const before = heard.length;
    const res = await v.http
      .post('/verification-srv/authentication/TOTP/initiation')
      .send({ request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: user.id });
    expectError(res, 403, 'FDS_BLOCKED');
    await v.gatehouse.idle();
    const events = heard.slice(before);
    expect(events.map((e) => [e.type, e.user.id, e.method, e.clientId])).to.deep.equal([
      ['sign_in_blocked', user.id, 'TOTP', 'app1'],
    ]);
    expect(events[0]!.at).to.be.instanceOf(Date);
    expect(events[0]!.request.requestId).to.be.a('string');
    const notices = (await sentMessages()).filter((m) => m.to === user.email && /blocked/.test(m.subject ?? ''));
    expect(notices).to.have.length(1);
  });

  it('an unknown identifier refused by FDS is nobody’s event', async () => {
    const before = heard.length;
    (await scriptedVerdict()).next = { action: 'deny', reason: 'bad_ip' };
    await initiate(v, 'PASSWORD', await v.flow(), { identifier: 'nobody-heard-of' });
    await v.gatehouse.idle();
    expect(heard.slice(before)).to.deep.equal([]);
  });
});
