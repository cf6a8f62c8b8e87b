/** A server for the metrics and tracing tests: the verification fixtures, a grant, and the config they add. */
import path from 'node:path';
import supertest from 'supertest';
import type { Logger } from 'pino';
import { buildApp, createLogger, parseConfig } from '@gatehouse-auth/core';
import { ADMIN_TOKEN, FIXTURES, type VerificationApp } from '../verification/support.js';
import { SCRIPTED_FDS } from '../verification/steps.js';
import { peerBusFor } from '../support/config.js';

const KEY = Buffer.alloc(32, 9).toString('base64');
export const MACHINE = { id: 'machine', secret: 'machine-secret-0123456789abcdef0123456789ab' };
const lowCost = { memory_cost: 1024, time_cost: 2 };

/** A verification app (the steps' helpers drive it) with the config sections a test adds. */
export async function startObservedApp(
  extra: Record<string, unknown>,
  opts: { databaseUrl?: string; plugins?: Record<string, unknown>[]; logger?: Logger } = {},
) {
  const config = parseConfig(
    {
      issuer: 'http://localhost:3000',
      server: { host: '127.0.0.1', port: 0 },
      database: { url: opts.databaseUrl ?? 'sqlite::memory:' },
      log: { level: 'silent' },
      secrets: { encryption_key: KEY },
      admin: { token: ADMIN_TOKEN },
      plugins: [
        { path: path.join(FIXTURES, 'capture-channel.js') },
        { path: path.join(FIXTURES, 'failing-channel.js') },
        { path: SCRIPTED_FDS },
        { name: '@gatehouse-auth/method-password', options: lowCost },
        { name: '@gatehouse-auth/method-sms', options: { channel: 'capture', max_sends: 50 } },
        { name: '@gatehouse-auth/method-email', options: { channel: 'broken', max_sends: 50 } },
        { name: '@gatehouse-auth/grant-client-credentials' },
        ...(opts.plugins ?? []),
        { name: '@gatehouse-auth/management' },
        { name: '@gatehouse-auth/setup-api' },
        { name: '@gatehouse-auth/page-login' },
        { name: '@gatehouse-auth/verification-api' },
        ...peerBusFor(opts.databaseUrl),
      ],
      apps: [
        {
          client_id: 'app1',
          client_secret: 'app1-secret-0123456789abcdef0123456789',
          redirect_uris: ['https://app1.example.test/cb'],
          login_stages: [['PASSWORD', 'SMS', 'EMAIL']],
        },
        {
          client_id: MACHINE.id,
          client_secret: MACHINE.secret,
          grant_types: ['client_credentials'],
          scopes: ['reports'],
        },
      ],
      ...extra,
    },
    {},
  );
  const logger = opts.logger ?? createLogger(process.env.GATEHOUSE_TEST_LOG ?? 'silent');
  const gatehouse = await buildApp(config, { logger });
  const { users, flows } = gatehouse.container.cradle;
  const v: VerificationApp = {
    gatehouse,
    http: supertest(gatehouse.app),
    user: async (username, more = {}) => (await users.create({ username, ...more })).id,
    flow: async (clientId = 'app1', userId = null) =>
      (await flows.create({ clientId, stages: [['PASSWORD', 'SMS', 'EMAIL']], ttlSeconds: 1800, userId })).id,
    close: () => gatehouse.close(),
  };
  return v;
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
