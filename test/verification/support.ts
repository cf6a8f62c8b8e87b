import path from 'node:path';
import { fileURLToPath } from 'node:url';
import supertest from 'supertest';
import { buildApp, createLogger, parseConfig, type Clock, type Gatehouse } from '@gatehouse-auth/core';
import { peerBusFor, withHostedPage, withSetupApi } from '../support/config.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const FIXTURES = path.join(here, 'fixtures');
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
const KEY = Buffer.alloc(32, 7).toString('base64');

export interface VerificationApp {
  gatehouse: Gatehouse;
  http: ReturnType<typeof supertest>;
  /** Creates an active user and returns its id. */
  user(username: string, extra?: { email?: string; phone?: string }): Promise<string>;
  /** Starts a login flow for an app, as the OAuth authorization endpoint will. */
  flow(clientId?: string, userId?: string | null): Promise<string>;
  close(): Promise<void>;
}

export interface AppOptions {
  databaseUrl?: string;
  plugins?: { name?: string; path?: string; options?: Record<string, unknown> }[];
  stages?: string[][];
  verification?: Record<string, unknown>;
  /** A controllable clock (e.g. FakeClock) for expiry tests; the system clock otherwise. */
  clock?: Clock;
  /** Options of @gatehouse-auth/notices-security (security notices to users), loaded when given. */
  notifications?: Record<string, unknown>;
}

/** The default plugin set of the verification tests: all methods, a capturing channel. */
export function defaultPlugins(): NonNullable<AppOptions['plugins']> {
  const lowCost = { memory_cost: 1024, time_cost: 2 };
  return [
    { path: path.join(FIXTURES, 'capture-channel.js') },
    { name: '@gatehouse-auth/method-password', options: lowCost },
    { name: '@gatehouse-auth/method-totp' },
    { name: '@gatehouse-auth/method-backupcode', options: lowCost },
    { name: '@gatehouse-auth/method-sms', options: { channel: 'capture', max_sends: 50 } },
    { name: '@gatehouse-auth/method-email', options: { channel: 'capture', max_sends: 50 } },
    { name: '@gatehouse-auth/method-ivr', options: { channel: 'capture', max_sends: 50 } },
  ];
}

export async function startVerificationApp(opts: AppOptions = {}): Promise<VerificationApp> {
  const config = parseConfig(
    {
      issuer: 'http://localhost:3000',
      database: { url: opts.databaseUrl ?? 'sqlite::memory:' },
      log: { level: 'silent' },
      secrets: { encryption_key: KEY },
      admin: { token: ADMIN_TOKEN },
      verification: opts.verification ?? {},
      plugins: withSetupApi(
        withHostedPage([
          ...(opts.plugins ?? defaultPlugins()),
          ...(opts.notifications ? [{ name: '@gatehouse-auth/notices-security', options: opts.notifications }] : []),
          ...peerBusFor(opts.databaseUrl),
        ]),
      ),
      apps: [
        {
          client_id: 'app1',
          client_secret: 'app1-secret-0123456789abcdef0123456789',
          redirect_uris: ['https://app1.example.test/cb'],
          login_stages: opts.stages ?? [
            ['PASSWORD', 'SMS', 'EMAIL'],
            ['TOTP', 'SMS', 'BACKUPCODE', 'IVR'],
          ],
        },
        {
          client_id: 'app2',
          client_secret: 'app2-secret-0123456789abcdef0123456789',
          redirect_uris: ['https://app2.example.test/cb'],
          login_stages: [['PASSWORD']],
        },
      ],
    },
    {},
  );
  const gatehouse = await buildApp(config, {
    logger: createLogger('silent'),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const { users, flows } = gatehouse.container.cradle;
  return {
    gatehouse,
    http: supertest(gatehouse.app),
    async user(username, extra = {}) {
      return (await users.create({ username, ...extra })).id;
    },
    async flow(clientId = 'app1', userId = null) {
      const app = config.apps.find((a) => a.client_id === clientId)!;
      return (await flows.create({ clientId, stages: app.login_stages, ttlSeconds: 1800, userId })).id;
    },
    close: () => gatehouse.close(),
  };
}
