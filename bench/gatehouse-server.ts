/**
 * Gatehouse for the benchmark, in its own process (own event loop, as deployed). Started by
 * bench/run.ts with fork(); the database URL comes in BENCH_DATABASE_URL. Reports
 * `{ type: 'ready', port, issuer }` over IPC and shuts down cleanly on `{ type: 'stop' }` (so a
 * --cpu-prof profile gets written). Bench-only, over IPC and never over HTTP: `{ type: 'seed', … }`
 * fills oauth_tokens with synthetic tokens through its storage (scenario h, see lib/seed-tokens.ts);
 * `{ type: 'mint', … }` mints authorization codes through TokenService.createCode (scenario e, see
 * lib/mint-codes.ts).
 */
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { buildApp, createLogger, listen, parseConfig } from '@gatehouse-auth/core';
import { countStatements } from '@gatehouse-auth/testing';
import {
  ADMIN_TOKEN,
  API_SCOPE,
  CODE_CLIENT,
  JWT_CLIENT,
  LOGIN_CLIENT,
  OPAQUE_CLIENT,
  REDIRECT_URI,
  TOTP_CLIENT,
} from './lib/clients.js';
import { answerMint, type MintRequest } from './lib/mint-codes.js';
import { startSampling, stopSampling } from './lib/heap-sampling.js';
import { freePort } from './lib/ports.js';
import { seedTokens, type SeedReply, type SeedRequest } from './lib/seed-tokens.js';
import { recordServerLatency } from './lib/server-latency.js';
import { timeSigning, timeStatements } from './lib/server-timings.js';

// tsx turns source maps on; a deployment runs plain JS without them, and with them every
// `new Error().stack` (Sequelize reads one per query) costs several times more.
process.setSourceMapsEnabled(false);

const databaseUrl = process.env.BENCH_DATABASE_URL;
if (!databaseUrl || !process.send) {
  console.error('gatehouse-server: start me from bench/run.ts (needs BENCH_DATABASE_URL and an IPC channel)');
  process.exit(2);
}

const port = await freePort();
const issuer = `http://127.0.0.1:${port}`;
const authCodeApp = (client: { id: string; secret: string }, stages: string[][]) => ({
  client_id: client.id,
  client_secret: client.secret,
  token_endpoint_auth_method: 'client_secret_basic',
  redirect_uris: [REDIRECT_URI],
  grant_types: ['authorization_code'],
  scopes: ['openid', API_SCOPE],
  login_stages: stages,
  token_format: 'jwt',
  // The peer signs its ID tokens with ES256: the same algorithm on both sides.
  id_token_signed_response_alg: 'ES256',
  // Codes are minted before the timed run; the longest lifetime RFC 6749 allows.
  code_ttl: 600,
});

const config = parseConfig(
  {
    issuer,
    server: { host: '127.0.0.1', port },
    database: { url: databaseUrl },
    log: { level: 'warn' },
    secrets: { encryption_key: randomBytes(32).toString('base64') },
    admin: { token: ADMIN_TOKEN },
    // Scenario e mints thousands of codes from 127.0.0.1 through /authorize before its run.
    oauth: { authorize_per_ip_per_minute: 0 },
    plugins: [
      // Hashing and signing on their own threads, as the demo config (decision 77).
      { name: '@gatehouse-auth/worker-threads' },
      // PostgreSQL (scenario f) needs the peer bus's transport (decision 74), as deployed.
      ...(databaseUrl.startsWith('postgres') ? [{ name: '@gatehouse-auth/peer-bus' }] : []),
      // Default argon2id cost (64 MiB, t=3, p=4): the password scenario measures the real thing.
      { name: '@gatehouse-auth/method-password' },
      { name: '@gatehouse-auth/method-totp' },
      { name: '@gatehouse-auth/grant-client-credentials' },
      { name: '@gatehouse-auth/grant-authorization-code' },
      // Scenario e signs in through the hosted page; it and the admin API use the management services.
      { name: '@gatehouse-auth/management' },
      { name: '@gatehouse-auth/page-login' },
      { name: '@gatehouse-auth/verification-api' },
      // The demo config's fraud rules: the TOTP pairs pay for them as deployed.
      { name: '@gatehouse-auth/fds-ip-list' },
      { name: '@gatehouse-auth/fds-velocity' },
      { name: '@gatehouse-auth/fds-new-context' },
      { name: '@gatehouse-auth/fds-push-fatigue' },
      // The scenarios create their users through the admin API, and set their methods up through the setup API.
      { name: '@gatehouse-auth/admin-api' },
      { name: '@gatehouse-auth/setup-api' },
    ],
    verification: {
      fds_rules: ['ip_list', 'velocity', 'new_context', 'push_fatigue'],
      // d and g run thousands of pairs on each of their 32 (8) login flows, where a real sign-in
      // starts a few; the per-flow budget (20 by default) is checked either way, by the same query.
      max_initiations_per_flow: 1_000_000,
    },
    apps: [
      {
        client_id: JWT_CLIENT.id,
        client_secret: JWT_CLIENT.secret,
        grant_types: ['client_credentials'],
        scopes: [API_SCOPE],
        token_format: 'jwt',
      },
      {
        client_id: OPAQUE_CLIENT.id,
        client_secret: OPAQUE_CLIENT.secret,
        grant_types: ['client_credentials'],
        scopes: [API_SCOPE],
        token_format: 'opaque',
      },
      authCodeApp(CODE_CLIENT, [['PASSWORD']]),
      authCodeApp(TOTP_CLIENT, [['TOTP']]),
      authCodeApp(LOGIN_CLIENT, [['PASSWORD'], ['TOTP']]),
    ],
  },
  {},
);

const gatehouse = await buildApp(config, { logger: createLogger('warn') });
const running = await listen(gatehouse);
// --server-latency only (BENCH_SERVER_LATENCY=1): the server's own view of each timed run.
recordServerLatency(running.server);
// And where its handling waits: each SQL statement, transaction and signature (lib/server-timings.ts).
timeStatements(gatehouse.container.cradle.sql.driver);
timeSigning(gatehouse.container.cradle.jwtSigning);

// Statements run, for the bench's queries-per-pair figure (asked for over IPC: `sql-count`).
const statements = countStatements(gatehouse.container.cradle.sql.driver);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  running.shutdown().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error('gatehouse-server: shutdown failed', err);
      process.exit(1);
    },
  );
};
const seed = (request: SeedRequest) => {
  seedTokens(gatehouse.container.cradle.sql, request).then(
    (reply) => process.send!(reply),
    (err: unknown) => {
      const reply: SeedReply = {
        type: 'seeded',
        rows: 0,
        inserted: 0,
        elapsedMs: 0,
        truncated: true,
        sample: [],
        error: (err as Error).message,
      };
      process.send!(reply);
    },
  );
};
/** A code as /authorize leaves it after a password sign-in (the same call, the app's settings). */
const mintOne = (request: MintRequest) => {
  const { tokens, clients } = gatehouse.container.cradle;
  const app = clients.get(CODE_CLIENT.id)!;
  return tokens.createCode({
    clientId: app.clientId,
    subject: request.subject,
    redirectUri: REDIRECT_URI,
    redirectUriSent: true,
    scope: ['openid', API_SCOPE],
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: 'S256',
    nonce: null,
    authTime: Math.floor(Date.now() / 1000),
    amr: ['pwd'],
    sid: null,
    ttlSeconds: app.codeTtl,
    grantTtlSeconds: app.refreshTokenTtl,
  });
};
/**
 * After a mint, its pages are copied from SQLite's WAL into the database file now: otherwise the
 * background checkpointer (decision 12) copies tens of MB of untimed mint writes during e's timed
 * run, on the core the load generator and the signing thread share. node-oidc-provider's mint
 * (into memory) leaves no such work.
 */
const checkpointMint = () => {
  if (!databaseUrl.startsWith('sqlite:')) return;
  const db = new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { timeout: 5000 });
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
};
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'stop') stop();
  else if (message?.type === 'mint') {
    const request = message as MintRequest;
    void answerMint(request.count, () => mintOne(request), checkpointMint);
  } else if (message?.type === 'seed') seed(message as SeedRequest);
  else if (message?.type === 'sql-count') process.send!({ type: 'sql-count', statements: statements.n });
  else if (message?.type === 'heap-start') void startSampling().then(() => process.send!({ type: 'heap-started' }));
  else if (message?.type === 'heap-stop') void stopSampling().then((summary) => process.send!(summary));
});
// The parent went away (crash, Ctrl-C): do not linger.
process.on('disconnect', stop);
process.send({ type: 'ready', port: running.port, issuer });
