/**
 * The hosted page's setup screens over HTTP (no browser): a login of an app with
 * `enroll_on_login` walked by hand (authorize, the password stage through the verification API,
 * the continuation), then every refusal with its status and code, a TOTP setup whose
 * confirmation completes the stage, the binding rule (no passkey on a password alone), and the
 * required-actions page held at /authorize/resume. Runs without Chromium.
 */
import { expect } from 'chai';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { generate } from 'otplib';
import { buildApp, createLogger, type Gatehouse, type UserAccounts } from '@gatehouse-auth/core';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OutboundMessage } from '@gatehouse-auth/core';
import { TEST_ADMIN_TOKEN, testConfig } from '../../../test/support/config.js';

const CAPTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/verification/fixtures/capture-channel.js',
);
const { sent } = (await import(CAPTURE)) as { sent: OutboundMessage[] };

const PASSWORD = 'a long enough passphrase 4 screens';
const ISSUER = 'http://localhost:3000';
const REDIRECT = 'http://127.0.0.1:9/cb';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('the setup screens of the hosted page (HTTP)', () => {
  let gatehouse: Gatehouse;
  let n = 0;

  before(async () => {
    const app = (client_id: string, login_stages: string[][], extra: Record<string, unknown> = {}) => ({
      client_id,
      token_endpoint_auth_method: 'none',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      scopes: ['openid'],
      login_stages,
      ...extra,
    });
    gatehouse = await buildApp(
      testConfig(
        [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { name: '@gatehouse-auth/method-totp' },
          { name: '@gatehouse-auth/method-fido2', options: { rp_id: 'localhost', origins: [ISSUER] } },
          { path: CAPTURE },
          { name: '@gatehouse-auth/method-sms', options: { channel: 'capture' } },
          { name: '@gatehouse-auth/grant-authorization-code' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          { name: '@gatehouse-auth/setup-api' },
        ],
        {
          issuer: ISSUER,
          dev_mode: true,
          admin: { token: TEST_ADMIN_TOKEN },
          apps: [
            app('team', [['PASSWORD'], ['TOTP']], { enroll_on_login: true }),
            app('keys', [['PASSWORD'], ['FIDO2']], { enroll_on_login: true }),
            app('plain', [['PASSWORD']]),
            app('phone', [['PASSWORD'], ['SMS']], { enroll_on_login: true }),
          ],
        },
      ),
      { logger: createLogger('silent') },
    );
  });
  after(async () => {
    await gatehouse.close();
  });

  async function userWithPassword(): Promise<{ id: string; username: string }> {
    const username = `screens-${++n}`;
    const user = await gatehouse.container.cradle.users.create({ username });
    await request(gatehouse.app)
      .post('/verification-actions-srv/setup/PASSWORD/initiation')
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ sub: user.id, password: PASSWORD })
      .expect(200);
    return { id: user.id, username };
  }

  /** An agent (its cookies) whose login of `clientId` has done the password stage: where it went next. */
  async function pastPassword(clientId: string, username: string) {
    const agent = request.agent(gatehouse.app);
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 'state-0123456789',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });
    const started = await agent.get(`/api/oauth2/authorize?${query}`).expect(303);
    const requestId = new URL(started.headers.location!, ISSUER).searchParams.get('request_id')!;
    const init = await agent
      .post('/verification-srv/authentication/PASSWORD/initiation')
      .send({ request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: username })
      .expect(200);
    const verified = await agent
      .post('/verification-srv/authentication/PASSWORD/verification')
      .send({ exchange_id: init.body.data.exchange_id.exchange_id, password: PASSWORD })
      .expect(200);
    const continued = await agent
      .post('/login/continue')
      .set('Origin', ISSUER)
      .type('form')
      .send({
        requestId,
        status_id: verified.body.data.status_id,
        verificationType: 'PASSWORD',
        sub: verified.body.data.sub,
      })
      .expect(303);
    return { agent, requestId, next: continued.headers.location! };
  }

  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  const form = (agent: TestAgent, path: string, body: Record<string, string>, origin = ISSUER) =>
    agent.post(path).set('Origin', origin).type('form').send(body);

  it('sends the stage to the setup screen, refuses forged and out-of-order forms, and completes the stage with TOTP', async () => {
    const user = await userWithPassword();
    const { agent, requestId } = await pastPassword('team', user.username);
    const stage = await agent.get(`/login?request_id=${requestId}`).expect(303);
    expect(stage.headers.location).to.equal(`/login/enroll?request_id=${requestId}`);
    const chooser = await agent.get(stage.headers.location!).expect(200);
    expect(chooser.text).to.contain('value="TOTP"');
    const csrf = csrfOf(chooser.text);
    const base = { request_id: requestId, mode: 'stage', csrf };

    expect((await form(agent, '/login/enroll/start', { ...base, method: 'TOTP', csrf: 'x' })).status).to.equal(403);
    expect(
      (await form(agent, '/login/enroll/start', { ...base, method: 'TOTP' }, 'https://evil.example')).status,
    ).to.equal(403);
    const notStarted = await form(agent, '/login/enroll/verify', { ...base, method: 'TOTP', pass_code: '123456' });
    expect(notStarted.status).to.equal(409);
    expect((await form(agent, '/login/enroll/start', { ...base, method: 'FIDO2' })).status).to.equal(409);
    // Another browser (no flow cookie) and a missing request id.
    expect((await request(gatehouse.app).get(`/login/enroll?request_id=${requestId}`)).status).to.equal(403);
    expect((await request(gatehouse.app).get('/login/enroll')).status).to.equal(400);
    expect((await request(gatehouse.app).get('/login/enroll?request_id=nope')).status).to.equal(404);

    const started = await form(agent, '/login/enroll/start', { ...base, method: 'TOTP' }).expect(200);
    const secret = /id="gh-secret">([A-Z2-7]+)</.exec(started.text)![1]!;
    expect(started.text).to.match(/<img id="gh-qr" src="data:image\/png;base64,/);
    const wrong = await form(agent, '/login/enroll/verify', { ...base, method: 'TOTP', pass_code: '000000' });
    expect(wrong.status).to.equal(401);
    const done = await form(agent, '/login/enroll/verify', {
      ...base,
      method: 'TOTP',
      pass_code: await generate({ secret }),
    }).expect(303);
    expect(done.headers.location).to.equal(`/api/oauth2/authorize/resume?request_id=${requestId}`);
    const answered = await agent.get(done.headers.location!).expect(303);
    expect(answered.headers.location).to.match(/^http:\/\/127\.0\.0\.1:9\/cb\?code=/);
    const [event] = await gatehouse.container.cradle.services.history.recent({
      types: ['login.stage_completed'],
      userId: user.id,
      limit: 1,
    });
    expect(event!.method).to.equal('TOTP');
    expect(event!.data).to.include({ setup: true, completed: true });
    // The screens of a finished login are gone: its cookie went with the answer to the app.
    const after = await form(agent, '/login/enroll/verify', { ...base, method: 'TOTP', pass_code: '000000' });
    expect(after.status).to.equal(403);
    expect(await gatehouse.container.cradle.services.credentials(user.id, 'TOTP').list()).to.have.length(1);
  });

  it('proves a phone by a code sent there, which completes the SMS stage', async () => {
    const user = await userWithPassword();
    const { agent, requestId } = await pastPassword('phone', user.username);
    const chooser = await agent.get(`/login/enroll?request_id=${requestId}`).expect(200);
    const base = { request_id: requestId, mode: 'stage', csrf: csrfOf(chooser.text), method: 'SMS' };
    const asked = await form(agent, '/login/enroll/start', base).expect(200);
    expect(asked.text).to.contain('Where to send the code');
    const bad = await form(agent, '/login/enroll/start', { ...base, address: 'not a phone' });
    expect(bad.status).to.equal(400);
    const started = await form(agent, '/login/enroll/start', { ...base, address: '+15551230042' }).expect(200);
    expect(started.text).to.contain('We sent a code to');
    let code: string | undefined;
    for (let i = 0; i < 100 && !code; i++) {
      code = /\b(\d{6})\b/.exec([...sent].reverse().find((m) => m.to === '+15551230042')?.text ?? '')?.[1];
      if (!code) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const done = await form(agent, '/login/enroll/verify', { ...base, pass_code: code! }).expect(303);
    expect(done.headers.location).to.equal(`/api/oauth2/authorize/resume?request_id=${requestId}`);
    const credentials = await gatehouse.container.cradle.services.credentials(user.id, 'SMS').list();
    expect(credentials.map((c) => c.data)).to.deep.equal([{ address: '+15551230042' }]);
  });

  it('the JSON step refuses with the verification API codes', async () => {
    const user = await userWithPassword();
    const { agent, requestId } = await pastPassword('team', user.username);
    const step = (name: string, body: Record<string, unknown>) => agent.post(`/login/enroll/setup/${name}`).send(body);
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['initiation', { request_id: 'nope', method: 'TOTP' }, 403, 'FLOW_NOT_BOUND'],
      ['scan', { request_id: requestId, method: 'TOTP' }, 400, 'ENROLLMENT_NOT_SUPPORTED'],
      ['initiation', { request_id: requestId, method: 'TOTP' }, 403, 'SETUP_NOT_ALLOWED'],
      ['verification', { request_id: requestId, method: 'TOTP' }, 403, 'SETUP_NOT_ALLOWED'],
    ];
    for (const [name, body, status, code] of cases) {
      const res = await step(name, body);
      expect(res.status, `${name} ${JSON.stringify(body)}`).to.equal(status);
      expect(res.body.error.code).to.equal(code);
    }
    const other = await request(gatehouse.app)
      .post('/login/enroll/setup/initiation')
      .send({ request_id: requestId, method: 'TOTP' });
    expect(other.body.error.code).to.equal('FLOW_NOT_BOUND');
  });

  it('never binds a passkey on a password alone: the screen says nothing can be set up (409)', async () => {
    const user = await userWithPassword();
    const { agent, requestId } = await pastPassword('keys', user.username);
    const chooser = await agent.get(`/login/enroll?request_id=${requestId}`);
    expect(chooser.status).to.equal(409);
    expect(chooser.text).to.contain('Nothing can be set up here');
    const json = await agent.post('/login/enroll/setup/initiation').send({ request_id: requestId, method: 'FIDO2' });
    expect(json.status).to.equal(403);
    expect(json.body.error.code).to.equal('SETUP_NOT_ALLOWED');
    expect(await gatehouse.container.cradle.services.credentials(user.id, 'FIDO2').list()).to.have.length(0);
  });

  it('holds the answer to the app while an admin requires a new password; the page refuses forged forms', async () => {
    const user = await userWithPassword();
    const accounts = gatehouse.container.cradle.services.resolve<UserAccounts>('userAccounts');
    const record = (await gatehouse.container.cradle.users.findById(user.id))!;
    await accounts.setRequiredActions({ via: 'test', userId: 'admin', ip: null }, record, ['change_password']);
    const { agent, requestId, next } = await pastPassword('plain', user.username);
    expect(next).to.equal(`/api/oauth2/authorize/resume?request_id=${requestId}`);
    const held = await agent.get(next).expect(303);
    expect(held.headers.location).to.equal(`/login/required?request_id=${requestId}`);
    expect(held.headers['set-cookie'] ?? []).not.to.satisfy((c: string[]) => c.some((v) => v.startsWith('gh_session')));
    const page = await agent.get(held.headers.location!).expect(200);
    const csrf = csrfOf(page.text);
    const body = { request_id: requestId, csrf, password: `${PASSWORD} new`, repeat: `${PASSWORD} new` };
    expect((await form(agent, '/login/required/password', { ...body, csrf: 'x' })).status).to.equal(403);
    expect((await form(agent, '/login/required/password', { ...body, repeat: 'other' })).status).to.equal(400);
    expect((await request(gatehouse.app).get(`/login/required?request_id=${requestId}`)).status).to.equal(403);
    const saved = await form(agent, '/login/required/password', body).expect(303);
    expect(saved.headers.location).to.equal(`/login/required?request_id=${requestId}`);
    const back = await agent.get(saved.headers.location!).expect(303);
    expect(back.headers.location).to.equal(`/api/oauth2/authorize/resume?request_id=${requestId}`);
    const answered = await agent.get(back.headers.location!).expect(303);
    expect(answered.headers.location).to.match(/^http:\/\/127\.0\.0\.1:9\/cb\?code=/);
    expect(await accounts.requiredActions(user.id)).to.deep.equal([]);

    // Required while the browser has a session: single sign-on is held on the same page.
    await accounts.setRequiredActions({ via: 'test', userId: 'admin', ip: null }, record, ['change_password']);
    const query = new URLSearchParams({
      client_id: 'plain',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 'state-0123456789',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });
    let location = (await agent.get(`/api/oauth2/authorize?${query}`).expect(303)).headers.location!;
    for (let i = 0; i < 3 && !location.startsWith('/login/required'); i++) {
      location = (await agent.get(location).expect(303)).headers.location!;
    }
    expect(location).to.match(/^\/login\/required\?request_id=/);
    expect((await agent.get(location)).status).to.equal(200);
    // prompt=none gets no page: the app hears interaction_required.
    query.set('prompt', 'none');
    const silent = await agent.get(`/api/oauth2/authorize?${query}`).expect(303);
    const answer = new URL(silent.headers.location!);
    expect(answer.origin + answer.pathname).to.equal(REDIRECT);
    expect(answer.searchParams.get('error')).to.equal('interaction_required');
  });
});
