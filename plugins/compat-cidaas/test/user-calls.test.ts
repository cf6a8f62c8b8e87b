/**
 * Issue 27, the cidaas UserService calls for a signed-in user: change the password, update the
 * profile, schedule the account's deletion, which addresses are verified. Every refusal with
 * its status and code, on the demo config (with @gatehouse-auth/page-account, which deletes).
 */
import type { UserAccounts } from '@gatehouse-auth/core';
import { expect } from 'chai';
import { admin, call, type Reply } from '../../../test/devices/support.js';
import { startDemoServer, type DemoServer } from '../../../test/oauth/demo-server.js';

const PASSWORD = 'an old passphrase 1234';

describe('cidaas UserService calls of the compat-cidaas plugin (issue 27)', function () {
  let server: DemoServer;

  before(async function () {
    server = await startDemoServer();
  });
  after(() => server?.close());

  async function newUser(name: string) {
    const { id } = await server.gatehouse.container.cradle.users.create({
      username: name,
      email: `${name}@example.test`,
    });
    const set = await call(
      server,
      '/verification-actions-srv/setup/PASSWORD/initiation',
      { sub: id, password: PASSWORD },
      admin,
    );
    expect(set.status).to.equal(200);
    return { id, username: name, email: `${name}@example.test` };
  }

  /** The user's access token from a login `agoSeconds` ago (two factors), with `scope`. */
  async function tokenFor(userId: string, opts: { agoSeconds?: number; scope?: string[]; amr?: string[] } = {}) {
    const scope = opts.scope ?? ['openid', 'gatehouse.methods'];
    const { clients, tokens } = server.gatehouse.container.cradle;
    const client = clients.get('demo-app')!;
    const grant = await tokens.createGrant({
      clientId: client.clientId,
      subject: userId,
      scope,
      ttlSeconds: 3600,
      data: {
        auth_time: Math.floor(server.clock.now().getTime() / 1000) - (opts.agoSeconds ?? 0),
        amr: opts.amr ?? ['pwd', 'otp'],
      },
    });
    const issued = await tokens.issue({
      client,
      subject: userId,
      scope,
      grantType: 'authorization_code',
      grantId: grant.id,
    });
    return { Authorization: `Bearer ${issued.access_token}` };
  }

  const codeOf = (r: Reply) => [r.status, r.code];
  const body = (sub: string) => ({
    sub,
    old_password: PASSWORD,
    new_password: 'a new passphrase 5678',
    confirm_password: 'a new passphrase 5678',
  });

  describe('POST /users-srv/changepassword', function () {
    const change = (body: Record<string, unknown>, headers: Record<string, string>) =>
      call(server, '/users-srv/changepassword', body, headers);

    it('refuses a missing, wrong-scope, old, other user’s or password-only token (401, 403, 401, 401, 401)', async function () {
      const user = await newUser('cp-token');
      const other = await newUser('cp-other');
      const body = {
        sub: user.id,
        old_password: PASSWORD,
        new_password: 'a new passphrase 5678',
        confirm_password: 'a new passphrase 5678',
      };
      expect(codeOf(await change(body, {}))).to.deep.equal([401, 'UNAUTHORIZED']);
      expect(codeOf(await change(body, { Authorization: 'Bearer not-a-token' }))).to.deep.equal([401, 'UNAUTHORIZED']);
      expect(codeOf(await change(body, await tokenFor(user.id, { scope: ['openid'] })))).to.deep.equal([
        403,
        'INSUFFICIENT_SCOPE',
      ]);
      expect(codeOf(await change(body, await tokenFor(user.id, { agoSeconds: 1000 })))).to.deep.equal([
        401,
        'REAUTHENTICATION_REQUIRED',
      ]);
      expect(codeOf(await change(body, await tokenFor(other.id)))).to.deep.equal([401, 'UNAUTHORIZED']);
      // alice has a second factor: a token from a password-only login changes nothing.
      const alice = server.alice.id;
      const pwdOnly = await change({ ...body, sub: alice }, await tokenFor(alice, { amr: ['pwd'] }));
      expect(codeOf(pwdOnly)).to.deep.equal([401, 'REAUTHENTICATION_REQUIRED']);
    });

    it('refuses missing fields, a confirmation that differs, a wrong current password, a weak new one', async function () {
      const user = await newUser('cp-fields');
      const token = await tokenFor(user.id);
      const missing = await change({ sub: user.id, old_password: PASSWORD }, token);
      expect(codeOf(missing)).to.deep.equal([400, 'FIELD_MISSING']);
      const differs = await change(
        { sub: user.id, old_password: PASSWORD, new_password: 'a new passphrase 5678', confirm_password: 'x' },
        token,
      );
      expect(codeOf(differs)).to.deep.equal([400, 'INVALID_FIELD']);
      const wrong = await change(
        {
          sub: user.id,
          old_password: 'not it at all',
          new_password: 'a new passphrase 5678',
          confirm_password: 'a new passphrase 5678',
        },
        token,
      );
      expect(codeOf(wrong)).to.deep.equal([401, 'VERIFICATION_FAILED']);
      const weak = await change(
        { sub: user.id, old_password: PASSWORD, new_password: 'short', confirm_password: 'short' },
        token,
      );
      expect(codeOf(weak)).to.deep.equal([400, 'PASSWORD_TOO_SHORT']);
      // Five calls in 15 minutes: the sixth is refused before the password is checked.
      const guess = { ...body(user.id), old_password: 'a guess' };
      for (let i = 0; i < 3; i++)
        expect(codeOf(await change(guess, token))).to.deep.equal([401, 'VERIFICATION_FAILED']);
      const right = {
        sub: user.id,
        old_password: PASSWORD,
        new_password: 'a new passphrase 5678',
        confirm_password: 'a new passphrase 5678',
      };
      expect(codeOf(await change(right, token))).to.deep.equal([429, 'TOO_MANY_ATTEMPTS']);
    });

    it('changes it: the new one signs in, the old one not; the token ends with every session; the user is told', async function () {
      const user = await newUser('cp-ok');
      const token = await tokenFor(user.id);
      const next = 'a new passphrase 5678';
      const done = await change(
        { sub: user.id, old_password: PASSWORD, new_password: next, confirm_password: next },
        token,
      );
      expect(done.status).to.equal(200);
      expect(done.data).to.deep.equal({ changed: true });
      expect(
        codeOf(await change({ old_password: next, new_password: 'x', confirm_password: 'x' }, token)),
      ).to.deep.equal([401, 'UNAUTHORIZED']);
      const [event] = await server.gatehouse.container.cradle.events.recent({
        userId: user.id,
        types: ['cidaas.password_changed'],
        limit: 1,
      });
      expect(event!.data).to.deep.equal({ actor: user.id, client_id: 'demo-app' });
      const again = await call(
        server,
        '/users-srv/changepassword',
        {
          sub: user.id,
          old_password: PASSWORD,
          new_password: 'another passphrase 9',
          confirm_password: 'another passphrase 9',
        },
        await tokenFor(user.id),
      );
      expect(codeOf(again)).to.deep.equal([401, 'VERIFICATION_FAILED']);
    });
  });

  describe('PUT /users-srv/user/profile/{sub}', function () {
    it('updates the profile claims; a changed email is refused (400 INVALID_FIELD); another user’s sub 401', async function () {
      const user = await newUser('profile');
      const other = await newUser('profile-other');
      const token = await tokenFor(user.id);
      const put = (sub: string, body: Record<string, unknown>) =>
        call(server, `/users-srv/user/profile/${sub}`, body, token, 'PUT');
      const done = await put(user.id, {
        given_name: 'Ada',
        family_name: 'Lovelace',
        email: user.email,
        username: user.username,
      });
      expect(done.status, JSON.stringify(done)).to.equal(200);
      expect(done.data.profile).to.include({ given_name: 'Ada', family_name: 'Lovelace' });
      expect(
        await server.gatehouse.container.cradle.services.resolve<UserAccounts>('userAccounts').profile(user.id),
      ).to.include({ given_name: 'Ada' });
      const changed = await put(user.id, { email: 'elsewhere@example.test' });
      expect(codeOf(changed)).to.deep.equal([400, 'INVALID_FIELD']);
      expect(codeOf(await put(user.id, { birthdate: 42 }))).to.deep.equal([400, 'INVALID_FIELD']);
      expect(codeOf(await put(other.id, { given_name: 'Eve' }))).to.deep.equal([401, 'UNAUTHORIZED']);
      expect(
        codeOf(await call(server, `/users-srv/user/profile/${user.id}`, { given_name: 'X' }, {}, 'PUT')),
      ).to.deep.equal([401, 'UNAUTHORIZED']);
    });
  });

  describe('GET /users-srv/user/communication/status/{sub}', function () {
    it('says which addresses are verified; a token without the scope 403', async function () {
      const user = await newUser('status');
      const get = async (headers: Record<string, string>) =>
        call(server, `/users-srv/user/communication/status/${user.id}`, undefined, headers, 'GET');
      const before = await get(await tokenFor(user.id));
      expect(before.data).to.deep.equal({
        sub: user.id,
        EMAIL: false,
        MOBILE: false,
        email_verified: false,
        mobile_number_verified: false,
      });
      await server.gatehouse.container.cradle.accounts.markVerified(user.id, 'email', user.email);
      expect((await get(admin)).data).to.include({ EMAIL: true, email_verified: true, MOBILE: false });
      expect(codeOf(await get(await tokenFor(user.id, { scope: ['openid'] })))).to.deep.equal([
        403,
        'INSUFFICIENT_SCOPE',
      ]);
    });
  });

  describe('POST /users-srv/user/unregister/scheduler/schedule/{sub}', function () {
    it('disables the account now and schedules its deletion after the grace period; an old login 401', async function () {
      const user = await newUser('unregister');
      const path = `/users-srv/user/unregister/scheduler/schedule/${user.id}`;
      expect(codeOf(await call(server, path, {}, await tokenFor(user.id, { agoSeconds: 1000 })))).to.deep.equal([
        401,
        'REAUTHENTICATION_REQUIRED',
      ]);
      const done = await call(server, path, { sub: user.id }, await tokenFor(user.id));
      expect(done.status, JSON.stringify(done)).to.equal(200);
      expect(done.data.scheduled).to.equal(true);
      const due = new Date(String(done.data.deletion_at)).getTime();
      expect(due - server.clock.now().getTime()).to.equal(7 * 86_400_000);
      const cradle = server.gatehouse.container.cradle;
      expect((await cradle.users.findById(user.id))!.status).to.equal('disabled');
      const [event] = await cradle.events.recent({ userId: user.id, types: ['cidaas.deletion_scheduled'], limit: 1 });
      expect(event!.data.due).to.equal(new Date(due).toISOString());
    });

    it('without a plugin that deletes accounts: 404 DELETION_NOT_CONFIGURED', async function () {
      const bare = await startDemoServer({
        configure(config) {
          config.plugins = config.plugins.filter((p) => p.name !== '@gatehouse-auth/page-account');
        },
      });
      try {
        const { id } = await bare.gatehouse.container.cradle.users.create({ username: 'nodelete' });
        const res = await call(bare, `/users-srv/user/unregister/scheduler/schedule/${id}`, {}, admin);
        expect(codeOf(res)).to.deep.equal([404, 'DELETION_NOT_CONFIGURED']);
      } finally {
        await bare.close();
      }
    });
  });
});
