/**
 * GET /health/dependencies and the gatehouse_dependency_up gauge: the database, and what the
 * delivery plugins check, against a real SMTP server and a webhook host that refuses connections.
 */
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SMTPServer } from 'smtp-server';
import { buildApp, type Gatehouse } from '@gatehouse-auth/core';
import { TEST_ADMIN_TOKEN, testConfig } from '../support/config.js';
import { freePort } from '../oauth/support.js';

describe('dependencies: GET /health/dependencies and gatehouse_dependency_up', function () {
  this.timeout(20_000);
  let smtp: SMTPServer;
  let smtpPort: number;
  let gatehouse: Gatehouse;
  const admin = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

  before(async () => {
    smtp = new SMTPServer({ logger: false, disabledCommands: ['STARTTLS'], authOptional: true, closeTimeout: 50 });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    gatehouse = await buildApp(
      testConfig(
        [
          {
            name: '@gatehouse-auth/channel-smtp',
            options: { id: 'mail', host: '127.0.0.1', port: smtpPort, from: 'no-reply@example.com', timeout_ms: 2000 },
          },
          {
            name: '@gatehouse-auth/channel-webhook',
            options: {
              endpoints: [
                {
                  id: 'sms-provider',
                  kinds: ['sms'],
                  url: `http://127.0.0.1:${await freePort()}/hook`, // nothing listens there
                  secret: 'x'.repeat(32),
                },
              ],
            },
          },
          { name: '@gatehouse-auth/metrics-prometheus', options: { expose: 'admin' } },
        ],
        { admin: { token: TEST_ADMIN_TOKEN } },
      ),
    );
  });
  after(async () => {
    await gatehouse?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('needs the admin token: it names internal hosts and their errors', async () => {
    const res = await request(gatehouse.app).get('/health/dependencies');
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('UNAUTHORIZED');
  });

  it('answers each dependency with who checks it; one down makes the whole "degraded", still 200', async () => {
    const res = await request(gatehouse.app).get('/health/dependencies').set(admin).expect(200);
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.body.status).to.equal('degraded');
    const byName = Object.fromEntries(
      (res.body.dependencies as { name: string; owner: string; up: boolean; reason?: string }[]).map((d) => [
        d.name,
        d,
      ]),
    );
    expect(Object.keys(byName)).to.have.members(['database', 'smtp:mail', 'webhook:sms-provider']);
    expect(byName.database).to.include({ owner: 'core', up: true });
    expect(byName['smtp:mail']).to.include({ owner: '@gatehouse-auth/channel-smtp', up: true });
    expect(byName['webhook:sms-provider']).to.include({ owner: '@gatehouse-auth/channel-webhook', up: false });
    expect(byName['webhook:sms-provider']!.reason).to.match(/ECONNREFUSED/);
  });

  it('the gauge says the same: 1 up, 0 down, labelled by dependency and owner', async () => {
    const text = (await request(gatehouse.app).get('/metrics').set(admin).expect(200)).text;
    expect(text).to.include('gatehouse_dependency_up{dependency="database",owner="core"} 1');
    expect(text).to.include('gatehouse_dependency_up{dependency="smtp:mail",owner="@gatehouse-auth/channel-smtp"} 1');
    expect(text).to.include(
      'gatehouse_dependency_up{dependency="webhook:sms-provider",owner="@gatehouse-auth/channel-webhook"} 0',
    );
  });

  it('readiness does not follow them: /health/ready stays 200 while the webhook host is down', async () => {
    await request(gatehouse.app).get('/health/ready').expect(200);
  });
});
