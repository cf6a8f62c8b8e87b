/**
 * Gatehouse for the benchmark, in its own process (own event loop, as deployed). Started by
 * bench/run.ts with fork(); the database URL comes in BENCH_DATABASE_URL. Reports
 * `{ type: 'ready', port, issuer }` over IPC and shuts down cleanly on `{ type: 'stop' }` (so a
 * --cpu-prof profile gets written). Bench-only, over IPC and never over HTTP: `{ type: 'seed', … }`
 * fills oauth_tokens with synthetic tokens through its storage (scenario h, see lib/seed-tokens.ts).
 */
import { randomBytes } from 'node:crypto';
import { buildApp, createLogger, listen, parseConfig } from '@gatehouse-auth/core';
import {
  ADMIN_TOKEN,
  API_SCOPE,
  CODE_CLIENT,
  JWT_CLIENT,
  OPAQUE_CLIENT,
  REDIRECT_URI,
  TOTP_CLIENT,
} from './lib/clients.js';
import { freePort } from './lib/ports.js';
import { seedTokens, type SeedReply, type SeedRequest } from './lib/seed-tokens.js';

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
      // Default argon2id cost (64 MiB, t=3, p=4): the password scenario measures the real thing.
      { name: '@gatehouse-auth/method-password' },
      { name: '@gatehouse-auth/method-totp' },
      { name: '@gatehouse-auth/grant-client-credentials' },
      { name: '@gatehouse-auth/grant-authorization-code' },
    ],
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
    ],
  },
  {},
);

const gatehouse = await buildApp(config, { logger: createLogger('warn') });
const running = await listen(gatehouse);

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
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'stop') stop();
  else if (message?.type === 'seed') seed(message as SeedRequest);
});
// The parent went away (crash, Ctrl-C): do not linger.
process.on('disconnect', stop);
process.send({ type: 'ready', port: running.port, issuer });
