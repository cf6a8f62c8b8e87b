import { expect } from 'chai';
import { FakeClock } from '@gatehouse-auth/testing';
import { startVerificationApp, type VerificationApp } from './support.js';
import { dataOf, enrolPassword, expectError, passwordUser, PASSWORD, type TestUser } from './steps.js';

/**
 * Enrollment with the user's own access token: only for that user, only after a recent login;
 * a new password or a removed method revokes the user's OAuth grants.
 */
describe('verification: enrollment with a user access token', () => {
  let v: VerificationApp;
  const clock = new FakeClock(new Date());

  before(async () => {
    v = await startVerificationApp({ clock });
  });
  after(() => v.close());

  /**
   * An access token (with a refresh token) from a login `agoSeconds` before now, by default with
   * the method-management scope and two factors.
   */
  async function tokenFor(user: TestUser, agoSeconds = 0, opts: { scope?: string[]; amr?: string[] } = {}) {
    const scope = opts.scope ?? ['openid', 'gatehouse.methods'];
    const { clients, tokens } = v.gatehouse.container.cradle;
    const client = clients.get('app1')!;
    const grant = await tokens.createGrant({
      clientId: client.clientId,
      subject: user.id,
      scope,
      ttlSeconds: 3600,
      data: { auth_time: Math.floor(clock.now().getTime() / 1000) - agoSeconds, amr: opts.amr ?? ['pwd', 'sms'] },
    });
    return tokens.issue({
      client: { ...client, grantTypes: [...client.grantTypes, 'refresh_token'] },
      subject: user.id,
      scope,
      grantType: 'authorization_code',
      grantId: grant.id,
      refreshToken: true,
    });
  }

  const setupWith = (token: string, method: string, body: Record<string, unknown>) =>
    v.http
      .post(`/verification-actions-srv/setup/${method}/initiation`)
      .set('Authorization', `Bearer ${token}`)
      .send(body);

  it('a recent login may enrol its own methods without naming sub', async () => {
    const user = await passwordUser(v, 'self');
    const { access_token } = await tokenFor(user);
    const data = dataOf(await setupWith(access_token, 'BACKUPCODE', {}));
    expect(data.codes).to.have.length(10);
  });

  it("a user's token cannot act for another user → 401 UNAUTHORIZED", async () => {
    const user = await passwordUser(v, 'self');
    const other = await passwordUser(v, 'other');
    const { access_token } = await tokenFor(user);
    expectError(await setupWith(access_token, 'BACKUPCODE', { sub: other.id }), 401, 'UNAUTHORIZED');
  });

  it('a login older than 15 minutes → 401 REAUTHENTICATION_REQUIRED', async () => {
    const user = await passwordUser(v, 'stale');
    const { access_token } = await tokenFor(user, 901);
    expectError(await setupWith(access_token, 'BACKUPCODE', {}), 401, 'REAUTHENTICATION_REQUIRED');
  });

  it('a token without the gatehouse.methods scope → 403 INSUFFICIENT_SCOPE (any other app, e.g. a third party)', async () => {
    const user = await passwordUser(v, 'scope');
    const { access_token } = await tokenFor(user, 0, { scope: ['openid'] });
    expectError(await setupWith(access_token, 'BACKUPCODE', {}), 403, 'INSUFFICIENT_SCOPE');
  });

  it('a password-only login cannot change the factors of an account with a second factor → 401', async () => {
    const user = await passwordUser(v, 'pwdonly');
    const { access_token } = await tokenFor(user, 0, { amr: ['pwd'] });
    expectError(await setupWith(access_token, 'BACKUPCODE', {}), 401, 'REAUTHENTICATION_REQUIRED');
    const removal = await v.http
      .delete(`/verification-actions-srv/setup/users/${user.id}/methods/SMS`)
      .set('Authorization', `Bearer ${access_token}`);
    expectError(removal, 401, 'REAUTHENTICATION_REQUIRED');
  });

  it('an unknown or revoked token → 401 UNAUTHORIZED', async () => {
    expectError(await setupWith('not-a-token', 'BACKUPCODE', {}), 401, 'UNAUTHORIZED');
  });

  it("a new password revokes the user's grants: the old refresh and access tokens turn inactive", async () => {
    const user = await passwordUser(v, 'rotate');
    const issued = await tokenFor(user);
    const { tokens } = v.gatehouse.container.cradle;
    expect((await tokens.inspect(issued.refresh_token!)).active).to.equal(true);
    await enrolPassword(v, user.id, `${PASSWORD} and more`);
    expect((await tokens.inspect(issued.refresh_token!)).active).to.equal(false);
    expect((await tokens.inspect(issued.access_token)).active).to.equal(false);
  });

  it('a new password also revokes tokens that stand alone (no refresh token, no grant row)', async () => {
    const user = await passwordUser(v, 'standalone');
    const { clients, tokens } = v.gatehouse.container.cradle;
    const standalone = await tokens.issue({
      client: clients.get('app1')!,
      subject: user.id,
      scope: ['openid', 'gatehouse.methods'],
      grantType: 'implicit',
      grantData: { auth_time: Math.floor(clock.now().getTime() / 1000) },
    });
    expect((await tokens.inspect(standalone.access_token)).active).to.equal(true);
    await enrolPassword(v, user.id, `${PASSWORD} once more`);
    expect((await tokens.inspect(standalone.access_token)).active).to.equal(false);
  });

  it("removing a method revokes the user's grants", async () => {
    const user = await passwordUser(v, 'remove');
    const issued = await tokenFor(user);
    const res = await v.http
      .delete(`/verification-actions-srv/setup/users/${user.id}/methods/PASSWORD`)
      .set('Authorization', `Bearer ${issued.access_token}`);
    expect(dataOf(res)).to.deep.equal({ removed: 1 });
    expect((await v.gatehouse.container.cradle.tokens.inspect(issued.refresh_token!)).active).to.equal(false);
  });
});
