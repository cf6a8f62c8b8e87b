/**
 * Invitations over HTTP (supertest): the admin API and its refusals, the emailed link (its token
 * in the fragment only, hashed at rest), the invitation page's refusals (CSRF, an unknown, used,
 * revoked or expired link, passwords that differ or that the policy refuses), its single use,
 * the address marked verified, and compat-cidaas's invite-info calls.
 */
import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { buildApp, createLogger, type Gatehouse, type OutboundMessage } from '@gatehouse-auth/core';
import { FakeClock } from '@gatehouse-auth/testing';
import { TEST_ADMIN_TOKEN, testConfig } from '../../../test/support/config.js';

const CAPTURE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/verification/fixtures/capture-channel.js',
);
const { sent } = (await import(CAPTURE)) as { sent: OutboundMessage[] };
const PASSWORD = 'a long enough passphrase for invitees';

describe('@gatehouse-auth/invitations over HTTP', () => {
  let gatehouse: Gatehouse;
  let clock: FakeClock;
  let origin: string;
  const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

  before(async () => {
    clock = new FakeClock(new Date());
    gatehouse = await buildApp(
      testConfig(
        [
          { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
          { path: CAPTURE },
          { name: '@gatehouse-auth/invitations', options: { email_channel: 'capture' } },
          { name: '@gatehouse-auth/compat-cidaas' },
          { name: '@gatehouse-auth/management' },
          { name: '@gatehouse-auth/page-login' },
          { name: '@gatehouse-auth/verification-api' },
          // Beside the admin API's /admin router: both take the admin token.
          { name: '@gatehouse-auth/admin-api' },
        ],
        {
          admin: { token: TEST_ADMIN_TOKEN },
          apps: [
            {
              client_id: 'shop',
              client_secret: 'shop-secret-0123456789abcdef0123456789abcdef',
              redirect_uris: ['https://shop.example/cb'],
              login_stages: [['PASSWORD']],
            },
          ],
        },
      ),
      { logger: createLogger('silent'), clock },
    );
    origin = new URL(gatehouse.container.cradle.config.issuer).origin;
  });
  after(async () => {
    await gatehouse.close();
  });

  const invite = (body: Record<string, unknown>) =>
    request(gatehouse.app).post('/admin/invitations').set(auth).send(body);

  /** The link of the last email to `to` (waits for the background send). */
  async function linkTo(to: string): Promise<string> {
    for (let i = 0; i < 100; i++) {
      const mail = [...sent].reverse().find((m) => m.to === to);
      if (mail) return /(https?:\/\/\S+)/.exec(mail.text)![1]!;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no email to ${to}`);
  }

  /** A browser's form session on the invitation page: its CSRF cookie and token. */
  async function formSession() {
    const page = await request(gatehouse.app).get('/invitations/accept').expect(200);
    const cookie = page.headers['set-cookie'] as unknown as string[];
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    return {
      page,
      post: (to: string, form: Record<string, string>, headers: Record<string, string> = { Origin: origin }) =>
        request(gatehouse.app)
          .post(`/invitations${to}`)
          .set('Cookie', cookie)
          .set(headers)
          .type('form')
          .send({ csrf, ...form }),
    };
  }

  const tokenOf = (link: string) => new URL(link).hash.slice(1);

  it('refuses without the admin token (401) and bad input (400 INVALID_FIELD naming the field)', async () => {
    expect((await request(gatehouse.app).post('/admin/invitations').send({ email: 'a@example.com' })).status).to.equal(
      401,
    );
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'email'],
      [{ email: 'not an address' }, 'email'],
      [{ email: 'b@example.com', username: 'has space' }, 'username'],
      [{ email: 'b@example.com', client_id: 'nope' }, 'client_id'],
      [{ email: 'b@example.com', client_id: 'shop', sign_in_url: 'https://evil.example/' }, 'sign_in_url'],
      [{ email: 'b@example.com', sign_in_url: 'javascript:alert(1)' }, 'sign_in_url'],
    ];
    for (const [body, field] of cases) {
      const res = await invite(body).expect(400);
      expect(res.body.error.code, JSON.stringify(body)).to.equal('INVALID_FIELD');
      expect(res.body.error.details).to.deep.equal({ field });
    }
    const extra = await invite({ email: 'b@example.com', admin: true }).expect(400);
    expect(extra.body.error.code).to.equal('INVALID_FIELD');
    expect(await gatehouse.container.cradle.users.findByIdentifier('b@example.com')).to.equal(null);
  });

  it('invites a new address: creates the user, emails a link whose token is in the fragment only, stores its hash', async () => {
    const res = await invite({
      email: 'Dora@Example.com',
      client_id: 'shop',
      sign_in_url: 'https://shop.example/login',
    }).expect(201);
    const invitation = res.body.data;
    expect(invitation).to.include({ email: 'dora@example.com', status: 'pending', client_id: 'shop' });
    const user = (await gatehouse.container.cradle.users.findByIdentifier('dora@example.com'))!;
    expect(invitation.user_id).to.equal(user.id);
    const link = await linkTo('dora@example.com');
    const url = new URL(link);
    expect(url.pathname).to.equal('/invitations/accept');
    expect(url.search).to.equal('');
    const token = tokenOf(link);
    expect(token).to.have.length.greaterThan(40);
    expect(JSON.stringify(res.body)).not.to.contain(token);
    // Nothing stored holds the token itself.
    const rows = await gatehouse.container.cradle.sql.select(`SELECT * FROM plugin_records`);
    expect(JSON.stringify(rows)).not.to.contain(token);
    expect(JSON.stringify(rows)).to.contain(invitation.invite_id);
    const got = await request(gatehouse.app).get(`/admin/invitations/${invitation.invite_id}`).set(auth).expect(200);
    expect(got.body.data).to.deep.equal(invitation);
    const listed = await request(gatehouse.app).get(`/admin/invitations?user_id=${user.id}`).set(auth).expect(200);
    expect(listed.body.data).to.deep.equal([invitation]);
    const missing = await request(gatehouse.app).get('/admin/invitations/AAAAAAAAAAAAAAAAAAAAAA').set(auth).expect(404);
    expect(missing.body.error.code).to.equal('INVITATION_NOT_FOUND');
  });

  it('the page: CSRF and Origin checked, an unknown link 404, passwords that differ or are refused 400, then single use', async () => {
    await invite({ email: 'erin@example.com', client_id: 'shop', sign_in_url: 'https://shop.example/login' }).expect(
      201,
    );
    const token = tokenOf(await linkTo('erin@example.com'));
    const s = await formSession();
    expect(s.page.headers['referrer-policy']).to.equal('same-origin');
    expect(s.page.text).not.to.contain(token);

    expect((await s.post('/accept/open', { token, csrf: 'forged' })).status).to.equal(403);
    expect((await s.post('/accept/open', { token }, { Origin: 'https://evil.example' })).status).to.equal(403);
    expect((await s.post('/accept/open', { token }, {})).status).to.equal(403);
    const unknown = await s.post('/accept/open', { token: 'x'.repeat(43) });
    expect(unknown.status).to.equal(404);
    expect(unknown.text).to.contain('This invitation link is not valid');

    const opened = await s.post('/accept/open', { token });
    expect(opened.status).to.equal(200);
    expect(opened.text).to.contain('Choose your password');
    const differ = await s.post('/accept', { token, password: PASSWORD, repeat: `${PASSWORD}!` });
    expect(differ.status).to.equal(400);
    expect(differ.text).to.contain('The two passwords differ.');
    const short = await s.post('/accept', { token, password: 'short', repeat: 'short' });
    expect(short.status).to.equal(400);
    expect(short.text).to.contain('That password cannot be used');

    // The refused password left the link usable.
    const done = await s.post('/accept', { token, password: PASSWORD, repeat: PASSWORD });
    expect(done.status).to.equal(200);
    expect(done.text).to.contain('Your account is ready');
    expect(done.text).to.contain('href="https://shop.example/login"');
    const user = (await gatehouse.container.cradle.users.findByIdentifier('erin@example.com'))!;
    expect(await gatehouse.container.cradle.services.accounts.verified(user, 'email')).to.equal(true);
    expect(await gatehouse.container.cradle.services.credentials(user.id, 'PASSWORD').list()).to.have.length(1);

    for (const again of [
      await s.post('/accept/open', { token }),
      await s.post('/accept', { token, password: `${PASSWORD}2`, repeat: `${PASSWORD}2` }),
    ]) {
      expect(again.status).to.equal(410);
      expect(again.text).to.contain('This invitation was used already');
    }
    const events = await gatehouse.container.cradle.services.history.recent({
      types: ['invitation.created', 'invitation.accepted'],
      userId: user.id,
      limit: 5,
    });
    expect(events.map((e) => e.type)).to.have.members(['invitation.accepted', 'invitation.created']);

    // An account with a password is no one to invite (that is recovery's job).
    const already = await invite({ email: 'erin@example.com' }).expect(409);
    expect(already.body.error.code).to.equal('ALREADY_SET_UP');
  });

  it('a revoked, a replaced and an expired link each get their clear page (410)', async () => {
    const first = (await invite({ email: 'finn@example.com' }).expect(201)).body.data;
    const firstToken = tokenOf(await linkTo('finn@example.com'));
    const revoked = await request(gatehouse.app).delete(`/admin/invitations/${first.invite_id}`).set(auth).expect(200);
    expect(revoked.body.data.status).to.equal('revoked');
    const s = await formSession();
    const page = await s.post('/accept/open', { token: firstToken });
    expect(page.status).to.equal(410);
    expect(page.text).to.contain('This invitation was withdrawn');

    // A new invitation revokes the pending one before it.
    sent.length = 0;
    await invite({ email: 'finn@example.com' }).expect(201);
    const second = tokenOf(await linkTo('finn@example.com'));
    sent.length = 0;
    await invite({ email: 'finn@example.com' }).expect(201);
    const third = tokenOf(await linkTo('finn@example.com'));
    expect((await s.post('/accept/open', { token: second })).status).to.equal(410);

    clock.advance(7 * 24 * 3600 + 1);
    try {
      const expired = await s.post('/accept/open', { token: third });
      expect(expired.status).to.equal(410);
      expect(expired.text).to.contain('This invitation has expired');
    } finally {
      clock.advance(-(7 * 24 * 3600 + 1));
    }
    const none = await request(gatehouse.app).delete('/admin/invitations/AAAAAAAAAAAAAAAAAAAAAA').set(auth).expect(404);
    expect(none.body.error.code).to.equal('INVITATION_NOT_FOUND');
  });

  it('a disabled user is not invited (409 USER_NOT_ACTIVE); a username of someone else is 409 USER_EXISTS', async () => {
    const user = await gatehouse.container.cradle.users.create({ username: 'gus', email: 'gus@example.com' });
    await gatehouse.container.cradle.users.setStatus(user.id, 'disabled');
    const res = await invite({ email: 'gus@example.com' }).expect(409);
    expect(res.body.error.code).to.equal('USER_NOT_ACTIVE');
    await gatehouse.container.cradle.users.create({ username: 'hal@example.com' });
    const clash = await invite({ email: 'hal@example.com' }).expect(409);
    expect(clash.body.error.code).to.equal('USER_EXISTS');
  });

  it('cidaas invite info (both paths): the status and the masked address; 404 INVITATION_NOT_FOUND otherwise', async () => {
    const invitation = (await invite({ email: 'ivy@example.com', client_id: 'shop' }).expect(201)).body.data;
    for (const path of ['/users-srv/invite/info/', '/useractions-srv/invitations/']) {
      const res = await request(gatehouse.app).get(`${path}${invitation.invite_id}`).expect(200);
      expect(res.body).to.deep.equal({
        success: true,
        status: 200,
        data: {
          invite_id: invitation.invite_id,
          email: 'i***@example.com',
          status: 'pending',
          client_id: 'shop',
          expires_at: invitation.expires_at,
        },
      });
      const unknown = await request(gatehouse.app).get(`${path}nope`).expect(404);
      expect(unknown.body.error.code).to.equal('INVITATION_NOT_FOUND');
    }
  });
});

describe('compat-cidaas invite info without the invitations plugin', () => {
  it('answers 404 INVITATION_NOT_FOUND', async () => {
    const gatehouse = await buildApp(
      testConfig([
        { name: '@gatehouse-auth/management' },
        { name: '@gatehouse-auth/verification-api' },
        { name: '@gatehouse-auth/compat-cidaas' },
      ]),
      {
        logger: createLogger('silent'),
      },
    );
    try {
      const res = await request(gatehouse.app).get('/users-srv/invite/info/AAAAAAAAAAAAAAAAAAAAAA').expect(404);
      expect(res.body.error.code).to.equal('INVITATION_NOT_FOUND');
    } finally {
      await gatehouse.close();
    }
  });
});

describe('invitations options', () => {
  it('stops start-up when email_channel names no channel', async () => {
    let error: Error | null = null;
    try {
      await buildApp(
        testConfig(
          [
            { name: '@gatehouse-auth/management' },
            { name: '@gatehouse-auth/invitations', options: { email_channel: 'nope' } },
          ],
          {},
        ),
        { logger: createLogger('silent') },
      );
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).to.match(/options\.email_channel: no delivery channel "nope"/);
  });
});
