/**
 * Two Gatehouse nodes on one PostgreSQL database behave as one server: what one issues the
 * other sees, a revocation on one is seen on the other at once, and every single-use item
 * (code, exchange, status_id, refresh token) used on both at the same time succeeds once.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { buildApp, createLogger, parseConfig, type Gatehouse } from '@gatehouse-auth/core';
import { withPostgresDatabase } from '../support/postgres.js';
import { PEER_BUS_POSTGRES } from '../support/config.js';

const KEY = Buffer.alloc(32, 11).toString('base64');
const ADMIN = 'two-nodes-admin-token-0123456789abcdef0123';
const SECRET = 'two-nodes-client-secret-0123456789abcdef';
const PASSWORD = 'a passphrase for two nodes';
const REDIRECT = 'https://app.example.test/cb';
const PER_NODE = 4;

function config(url: string) {
  return parseConfig(
    {
      issuer: 'https://login.example.test',
      database: { url },
      log: { level: 'silent' },
      secrets: { encryption_key: KEY },
      admin: { token: ADMIN },
      maintenance: { purge_interval_seconds: 0 },
      plugins: [
        { name: '@gatehouse-auth/method-password', options: { memory_cost: 1024, time_cost: 2 } },
        { name: '@gatehouse-auth/grant-authorization-code' },
        { name: '@gatehouse-auth/grant-refresh-token' },
        { name: '@gatehouse-auth/grant-client-credentials' },
        { name: '@gatehouse-auth/management' },
        { name: '@gatehouse-auth/page-login' },
        { name: '@gatehouse-auth/verification-api' },
        { name: '@gatehouse-auth/setup-api' },
        PEER_BUS_POSTGRES,
      ],
      apps: [
        {
          client_id: 'web',
          client_secret: SECRET,
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
          scopes: ['openid', 'offline_access', 'api'],
          login_stages: [['PASSWORD']],
        },
      ],
    },
    {},
  );
}

type Agent = ReturnType<typeof supertest>;

describe('two nodes on one PostgreSQL database', function () {
  this.timeout(60_000);
  const db = withPostgresDatabase();
  let a: Gatehouse;
  let b: Gatehouse;
  let A: Agent;
  let B: Agent;

  before(async () => {
    a = await buildApp(config(db.url), { logger: createLogger('silent') });
    b = await buildApp(config(db.url), { logger: createLogger('silent') });
    A = supertest(a.app);
    B = supertest(b.app);
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  const token = (agent: Agent, form: Record<string, string>) =>
    agent.post('/oauth/token').auth('web', SECRET).type('form').send(form);
  const introspect = (agent: Agent, value: string) =>
    agent.post('/token/introspect').auth('web', SECRET).type('form').send({ token: value });
  /** Fires `request` PER_NODE times on each node at once; returns the statuses. */
  const onBoth = async (request: (agent: Agent) => Promise<{ status: number }>) =>
    (await Promise.all([A, B].flatMap((agent) => Array.from({ length: PER_NODE }, () => request(agent))))).map(
      (r) => r.status,
    );
  /** Exactly one 200; every other answer is one of `losers` (never a 5xx). */
  const oneWinner = (statuses: number[], losers: number[]) => {
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).to.have.length(1);
    expect(
      statuses.filter((s) => s !== 200 && !losers.includes(s)),
      JSON.stringify(statuses),
    ).to.deep.equal([]);
  };

  it('a token issued on A introspects active on B; revoked on A, it is inactive on B at once', async () => {
    const issued = await token(A, { grant_type: 'client_credentials', scope: 'api' });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
    expect((await introspect(B, issued.body.access_token)).body.active).to.equal(true);
    const revoked = await A.post('/oauth2/revoke/')
      .auth('web', SECRET)
      .type('form')
      .send({ token: issued.body.access_token });
    expect(revoked.status).to.equal(200);
    expect((await introspect(B, issued.body.access_token)).body).to.deep.equal({ active: false });
  });

  /** A user with a password, enrolled on A. */
  async function user(name: string): Promise<string> {
    const id = (await a.container.cradle.users.create({ username: name })).id;
    const res = await A.post('/verification-actions-srv/setup/PASSWORD/initiation')
      .set('Authorization', `Bearer ${ADMIN}`)
      .send({ sub: id, password: PASSWORD });
    expect(res.status).to.equal(200);
    return id;
  }

  async function initiated(name: string) {
    const flow = await a.container.cradle.flows.create({ clientId: 'web', stages: [['PASSWORD']], ttlSeconds: 600 });
    const init = await A.post('/verification-srv/authentication/PASSWORD/initiation').send({
      request_id: flow.id,
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: name,
    });
    expect(init.status).to.equal(200);
    return { requestId: flow.id, exchangeId: init.body.data.exchange_id.exchange_id as string };
  }

  it('an exchange verified on both nodes at once succeeds exactly once', async () => {
    await user('exchange-user');
    const { exchangeId } = await initiated('exchange-user');
    oneWinner(
      await onBoth((agent) =>
        agent
          .post('/verification-srv/authentication/PASSWORD/verification')
          .send({ exchange_id: exchangeId, password: PASSWORD }),
      ),
      [409, 429],
    );
  });

  it('a status_id continued on both nodes at once succeeds exactly once', async () => {
    await user('status-user');
    const { requestId, exchangeId } = await initiated('status-user');
    const verified = await B.post('/verification-srv/authentication/PASSWORD/verification').send({
      exchange_id: exchangeId,
      password: PASSWORD,
    });
    expect(verified.status).to.equal(200);
    oneWinner(
      await onBoth((agent) =>
        agent
          .post('/login/continue')
          .set('Accept', 'application/json')
          .type('form')
          .send({ requestId, status_id: verified.body.data.status_id, verificationType: 'PASSWORD' }),
      ),
      [409],
    );
  });

  /** A code as the authorization endpoint mints it after a login (on node A). */
  const mintCode = (subject: string) =>
    a.container.cradle.tokens.createCode({
      clientId: 'web',
      subject,
      redirectUri: REDIRECT,
      redirectUriSent: true,
      scope: ['openid', 'offline_access'],
      codeChallenge: null,
      codeChallengeMethod: null,
      sid: null,
      nonce: null,
      authTime: Math.floor(Date.now() / 1000),
      amr: ['pwd'],
      ttlSeconds: 60,
      grantTtlSeconds: 3600,
    });

  it('a code redeemed on both nodes at once succeeds exactly once', async () => {
    const subject = await user('code-user');
    const code = await mintCode(subject);
    oneWinner(
      await onBoth((agent) => token(agent, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT })),
      [400],
    );
  });

  it('a refresh token used on both nodes at once succeeds at most once, and the family ends', async () => {
    const subject = await user('refresh-user');
    const code = await mintCode(subject);
    const first = await token(A, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    expect(first.body.refresh_token).to.be.a('string');
    const statuses = await onBoth((agent) =>
      token(agent, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }),
    );
    expect(statuses.filter((s) => s === 200).length, JSON.stringify(statuses)).to.be.at.most(1);
    expect(
      statuses.filter((s) => s !== 200).every((s) => s === 400),
      JSON.stringify(statuses),
    ).to.equal(true);
    // Reuse of the rotated token revoked the whole family, the winner's tokens included.
    expect((await introspect(B, first.body.access_token)).body).to.deep.equal({ active: false });
  });
});
