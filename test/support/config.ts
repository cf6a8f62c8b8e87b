import { parseConfig, type GatehouseConfig } from '@gatehouse-auth/core';

/** A fixed 32-byte key (base64) so tests never generate a key file under ./data. */
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/** An admin token long enough for the schema (32+ characters). */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123';

/** A `plugins:` entry as written in YAML. */
export interface PluginEntryInput {
  name?: string;
  path?: string;
  options?: Record<string, unknown>;
}

type Section = Record<string, unknown>;

/** The hosted login page: /authorize sends the browser there for every app without a login_page_url. */
export const HOSTED_PAGE: PluginEntryInput = { name: '@gatehouse-auth/page-login' };

/** The management services (`userAccounts`, `clientAdmin`) the hosted page and the sites use (decision 0063). */
export const MANAGEMENT: PluginEntryInput = { name: '@gatehouse-auth/management' };

/** The setup API (`/verification-actions-srv/setup`, decision 70): tests set methods up through it. */
export const SETUP_API: PluginEntryInput = { name: '@gatehouse-auth/setup-api' };

/** The verification API (`/verification-srv/…`, `/login/continue`, decision 78): every login through the API calls it. */
export const VERIFICATION_API: PluginEntryInput = { name: '@gatehouse-auth/verification-api' };

/** The peer bus (decisions 74, 87): a server on PostgreSQL or with server.workers does not start without it. */
export const PEER_BUS_POSTGRES: PluginEntryInput = { name: '@gatehouse-auth/peer-bus' };

/** The plugins a server on this database must list: the peer bus on PostgreSQL, none on SQLite. */
export function peerBusFor(databaseUrl: string | undefined): PluginEntryInput[] {
  return databaseUrl?.startsWith('postgres') ? [PEER_BUS_POSTGRES] : [];
}

/** `plugins` with the setup API at the end, unless it is listed, and management, which it depends on (decision 81). */
export function withSetupApi<T extends PluginEntryInput>(plugins: T[]): (T | PluginEntryInput)[] {
  const withApi = plugins.some((p) => p.name === SETUP_API.name) ? plugins : [...plugins, SETUP_API];
  return withApi.some((p) => p.name === MANAGEMENT.name) ? withApi : [...withApi, MANAGEMENT];
}

/** `plugins` with the verification API at the end, unless it is listed (decision 78). */
export function withVerificationApi<T extends PluginEntryInput>(plugins: T[]): (T | PluginEntryInput)[] {
  return plugins.some((p) => p.name === VERIFICATION_API.name) ? plugins : [...plugins, VERIFICATION_API];
}

/**
 * `plugins` with the hosted login page at the end, unless it is listed (decision 43), and what it
 * depends on: the management services and the verification API.
 */
export function withHostedPage<T extends PluginEntryInput>(plugins: T[]): (T | PluginEntryInput)[] {
  const withPage = plugins.some((p) => p.name === HOSTED_PAGE.name) ? plugins : [...plugins, HOSTED_PAGE];
  const withManagement = withPage.some((p) => p.name === MANAGEMENT.name) ? withPage : [...withPage, MANAGEMENT];
  return withVerificationApi(withManagement);
}

/**
 * The raw (unparsed) minimal config: in-memory SQLite, silent logs, a fixed encryption key.
 * `overrides` are merged one level deep, so `{ admin: { token } }` keeps the other sections.
 */
export function testConfigInput(plugins: PluginEntryInput[] = [], overrides: Record<string, unknown> = {}): Section {
  const input: Section = {
    server: { host: '127.0.0.1', port: 0 },
    database: { url: 'sqlite::memory:' },
    log: { level: 'silent' },
    secrets: { encryption_key: TEST_ENCRYPTION_KEY },
    plugins,
  };
  for (const [key, value] of Object.entries(overrides)) {
    const current = input[key];
    input[key] = isSection(current) && isSection(value) ? { ...current, ...value } : value;
  }
  return input;
}

/**
 * A validated config for `buildApp`. The environment is empty on purpose: PORT or DATABASE_URL
 * set in the shell running the tests must not change what the tests build.
 */
export function testConfig(plugins: PluginEntryInput[] = [], overrides: Record<string, unknown> = {}): GatehouseConfig {
  return parseConfig(testConfigInput(plugins, overrides), {});
}

function isSection(value: unknown): value is Section {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
