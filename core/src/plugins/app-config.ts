import type { AppSettings } from '@gatehouse-auth/plugin-api';
import type { ZodType } from 'zod';
import type { AppConfig, GatehouseConfig } from '../config/schema.js';
import { APP_URL_KEYS, HTTPS_REQUIRED, appSchema, appSchemaKeys, insecureUrl } from '../config/schema.js';
import { BootError } from '../errors.js';
import { clientOf } from '../oauth/clients.js';
import { formatPath } from '../util/interpolate.js';
import { appComposition } from './composition.js';
import { parsed, type Extensions, type ResolvedPlugin } from './loader.js';

const parse = <T>(schema: ZodType<T>, value: unknown, path: (string | number)[]): T =>
  parsed(schema, value, path, (issue) => new BootError('CONFIG_INVALID', issue));

const pluginApps = new WeakSet<AppConfig>();

/**
 * The apps plugins registered (`api.app`) join the config's, so that every part that looks an
 * app up finds them (flows, single sign-on, the token service). One a config app has stops start-up.
 */
export function joinPluginApps(config: GatehouseConfig, extensions: Extensions): void {
  const own = config.apps.filter((app) => !pluginApps.has(app));
  own.forEach((app, i) => {
    if (app.pinned_logins) {
      throw new BootError('CONFIG_INVALID', `apps[${i}].pinned_logins: only a plugin's own app (api.app) may set it`);
    }
  });
  for (const app of extensions.apps.values()) {
    if (own.some((a) => a.client_id === app.client_id)) {
      const owner = extensions.apps.ownerOf(app.client_id)!;
      throw new BootError(
        'PLUGIN_DUPLICATE_ID',
        `plugin ${owner}: app "${app.client_id}" is already one of the config's apps`,
      );
    }
    // Its logins start only from the plugin's pages (web.login.start with userId), never at /authorize.
    if (app.pinned_logins && (app.redirect_uris.length > 0 || app.login_page_url)) {
      throw new BootError(
        'PLUGIN_INVALID',
        `plugin ${extensions.apps.ownerOf(app.client_id)!}: app "${app.client_id}" has pinned_logins, so no redirect_uris or login_page_url`,
      );
    }
    pluginApps.add(app);
  }
  config.apps.splice(0, config.apps.length, ...own, ...extensions.apps.values());
}

/**
 * Checks and parses what plugins add to the apps' config: each key a plugin declares in
 * `appConfig` with its schema (defaults for apps that leave it out), and each app's
 * `methods.<ID>` with the method's `appOptions`. A key no one declares is refused, as the core's
 * own keys are: with one line naming it.
 */
export function appSettings(
  config: GatehouseConfig,
  plugins: ResolvedPlugin[],
  extensions: Extensions,
): Map<string, AppSettings> {
  const owners = appKeyOwners(plugins);
  const out = new Map<string, AppSettings>();
  config.apps.forEach((app: AppConfig, i) => {
    const settings = settingsOf(app, `apps[${i}]`, owners, extensions);
    const insecure = config.dev_mode ? null : insecureAppUrl(app, settings, owners);
    if (insecure) throw new BootError('CONFIG_INVALID', `apps[${i}].${insecure}: ${HTTPS_REQUIRED}`);
    checkPolicies(app, settings, `apps[${i}]`, extensions);
    out.set(app.client_id, settings);
  });
  return out;
}

/**
 * The first of an app's URLs that would carry codes, tokens or logins over plain http (`key` or
 * `key[j]`), or null: the core's keys (`APP_URL_KEYS`) and those plugins name in `appUrlKeys`,
 * which only the core can check, since only it knows dev_mode.
 */
function insecureAppUrl(app: AppConfig, settings: AppSettings, owners: KeyOwners): string | null {
  const plugins = [...owners].filter(([, owner]) => owner.url).map(([key]) => [key, settings.settings[key]] as const);
  for (const [key, value] of [...APP_URL_KEYS.map((key) => [key, app[key]] as const), ...plugins]) {
    const j = (Array.isArray(value) ? value : [value]).findIndex((url) => insecureUrl(url));
    if (j >= 0) return Array.isArray(value) ? `${key}[${j}]` : key;
  }
  return null;
}

/** App keys the core had before a plugin took them (decision 65): refused without it, naming it. */
const MOVED_APP_KEYS = new Map([
  ['branding', '@gatehouse-auth/branding'],
  ['backchannel_logout_uri', '@gatehouse-auth/oauth-backchannel-logout'],
  ['backchannel_logout_session_required', '@gatehouse-auth/oauth-backchannel-logout'],
  ['security_profile', '@gatehouse-auth/oauth-fapi'],
]);

/**
 * Each key's owner and schemas: `stored` for apps stored in the database (`storedAppConfig`, else
 * `schema`); `url` when the plugin names it in `appUrlKeys` (https outside dev_mode).
 */
type KeyOwners = Map<string, { plugin: string; schema: ZodType; stored: ZodType; url: boolean }>;

/** Who declares each app key plugins add (`appConfig`); a key claimed twice stops start-up. */
function appKeyOwners(plugins: ResolvedPlugin[]): KeyOwners {
  const core = new Set(appSchemaKeys());
  const owners: KeyOwners = new Map();
  for (const { plugin } of plugins) {
    for (const [key, schema] of Object.entries(plugin.appConfig ?? {})) {
      const owner = owners.get(key)?.plugin ?? (core.has(key) ? 'the core' : null);
      if (owner)
        throw new BootError(
          'PLUGIN_INVALID',
          `plugin ${plugin.name}: the app key "${key}" belongs to ${owner === 'the core' ? owner : `plugin ${owner}`}`,
        );
      const url = plugin.appUrlKeys?.includes(key) ?? false;
      owners.set(key, { plugin: plugin.name, schema, stored: plugin.storedAppConfig?.[key] ?? schema, url });
    }
    const stray = plugin.appUrlKeys?.find((key) => !Object.hasOwn(plugin.appConfig ?? {}, key));
    if (stray !== undefined)
      throw new BootError('PLUGIN_INVALID', `plugin ${plugin.name}: appUrlKeys names "${stray}", not in appConfig`);
  }
  return owners;
}

/** One app's plugin keys and method options, parsed; `label` names it in errors (`apps[2]`). */
function settingsOf(
  app: AppConfig,
  label: string,
  owners: KeyOwners,
  extensions: Extensions,
  stored = false,
): AppSettings {
  const core = new Set(appSchemaKeys());
  const path = label.startsWith('apps[') ? ['apps', Number(label.slice(5, -1))] : [label];
  const unknown = Object.keys(app).find((key) => !core.has(key) && !owners.has(key));
  if (unknown) {
    const moved = MOVED_APP_KEYS.get(unknown);
    throw new BootError(
      'CONFIG_INVALID',
      `${label}.${unknown}: is not a known key (neither the core nor a loaded plugin adds it${moved ? `; the plugin ${moved} does` : ''})`,
    );
  }
  const settings: Record<string, unknown> = {};
  for (const [key, owner] of owners)
    settings[key] = parse(stored ? owner.stored : owner.schema, app[key], [...path, key]);
  const methods: Record<string, unknown> = {};
  for (const method of extensions.methods.values()) {
    if (method.appOptions)
      methods[method.id] = parse(method.appOptions, app.methods[method.id], [...path, 'methods', method.id]);
  }
  for (const id of Object.keys(app.methods)) {
    const method = extensions.methods.get(id);
    if (!method) throw new BootError('CONFIG_INVALID', `${label}.methods.${id}: no method "${id}" is registered`);
    if (!method.appOptions)
      throw new BootError('CONFIG_INVALID', `${label}.methods.${id}: method ${id} takes no per-app options`);
  }
  return { settings, methods };
}

/**
 * What the client policies that hold the app find wrong with its entry (`appIssues`, decision
 * 80): every breach on a line of its own naming its key (`apps[2].code_ttl: …`), as the config's
 * own problems are, so an operator fixes them all in one go.
 */
function checkPolicies(app: AppConfig, settings: AppSettings, label: string, extensions: Extensions): void {
  if (extensions.clientPolicies.values().length === 0) return;
  const client = clientOf(app, settings.settings);
  const features = {
    authorizationRequests: extensions.requestResolvers.values().length > 0,
    tokenBindings: extensions.tokenBinding.ids(),
  };
  const lines = extensions.clientPolicies
    .values()
    .filter((policy) => policy.appliesTo(client))
    .flatMap((policy) => policy.appIssues?.(client, app, features) ?? [])
    .map(({ path, message }) => `${formatPath([label, ...path])}: ${message}`);
  if (lines.length) throw new BootError('CONFIG_INVALID', lines.join('\n'));
}

/**
 * Checks an app entry that does not come from the config file (one stored in the database) as
 * start-up checks the config's: the app schema, the config-wide rules (signing algorithms,
 * https), the plugins' keys and the composition. Throws a BootError naming the key.
 */
export function appChecker(
  config: GatehouseConfig,
  plugins: ResolvedPlugin[],
  extensions: Extensions,
): (entry: unknown, label: string) => { app: AppConfig; settings: AppSettings } {
  const owners = appKeyOwners(plugins);
  const checkApp = appComposition(config, extensions);
  return (entry, label) => {
    const app = parse(appSchema, entry, [label]);
    for (const key of ['id_token_signed_response_alg', 'access_token_signed_response_alg'] as const) {
      if (!config.oauth.signing_algs.includes(app[key]))
        throw new BootError(
          'CONFIG_INVALID',
          `${label}.${key}: ${app[key]} is not among oauth.signing_algs (${config.oauth.signing_algs.join(', ')})`,
        );
    }
    const settings = settingsOf(app, label, owners, extensions, true);
    const insecure = config.dev_mode ? null : insecureAppUrl(app, settings, owners);
    if (insecure)
      throw new BootError(
        'CONFIG_INVALID',
        `${label}.${insecure}: must be https (http only to localhost, 127.0.0.1 or [::1]) unless dev_mode is on`,
      );
    checkApp(app, label);
    checkPolicies(app, settings, label, extensions);
    return { app, settings };
  };
}
