import {
  channelProblems,
  clientAuthenticationProblems,
  clientPolicyProblems,
  commandProblems,
  fdsRuleProblems,
  grantProblems,
  methodProblems,
  promptHandlerProblems,
  REPLACEABLE_SERVICES,
  requestObjectVerifierProblems,
  requestResolverProblems,
  routeProblems,
  tokenBindingProblems,
  type AuthMethod,
  type AuthorizationRequestResolver,
  type ClientAuthentication,
  type ClientPolicy,
  type DeliveryChannel,
  type FdsRule,
  type GatehousePlugin,
  type GrantHandler,
  type LoadedPluginInfo,
  type MetadataMember,
  PLUGIN_API_VERSION,
  type PluginApi,
  type PluginCatalogs,
  type PromptHandler,
  type RecordStore,
  type RequestObjectVerifier,
  type RouteContribution,
  type Served,
  type ServingInfo,
  type Services,
  type SessionEndListener,
  type TokenBinding,
  type WebApi,
} from '@gatehouse-auth/plugin-api';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import semver from 'semver';
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import { appSchema, type AppConfig, type PluginEntry } from '../config/schema.js';
import { describeIssue } from '../config/load.js';
import { BootError, isBootError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { DependencyChecks } from '../observability/dependencies.js';
import type { SecurityEvents } from '../verification/security-events.js';
import { Registry } from './registry.js';

/** The id of the DPoP binding: its `cnf` member. */
export const TOKEN_BINDING = 'jkt';

/** The id of a token binding: the `cnf` member it fills. */
const bindingId = (b: TokenBinding): string => b.confirmation ?? TOKEN_BINDING;

/** The one id a request resolver registers under: a second resolver is a duplicate. */
const REQUEST_RESOLVER_ID = 'request_uri';

/** The one id a request object verifier registers under. */
const REQUEST_OBJECT_ID = 'request';

/** Everything plugins can add, one registry per kind. */
export type Extensions = ReturnType<typeof createExtensions>;

export function createExtensions() {
  let rootMounts = 0;
  return {
    methods: new Registry<AuthMethod>('method', (m) => m.id, methodProblems),
    grants: new Registry<GrantHandler>('grant', (g) => g.grantType, grantProblems),
    fdsRules: new Registry<FdsRule>('FDS rule', (r) => r.id, fdsRuleProblems),
    channels: new Registry<DeliveryChannel>('delivery channel', (c) => c.id, channelProblems),
    // A mount path is one plugin's, but the root is shared (compat-cidaas's prefixes, page-landing's `/`).
    // Keyed as express matches it (any case, trailing slashes ignored), so no alias gets past a mount.
    routes: new Registry<RouteContribution>(
      'route',
      (r) => {
        const key = String(r.path).toLowerCase().replace(/\/+$/, '') || '/';
        return key === '/' ? `/#${++rootMounts}` : key;
      },
      routeProblems,
    ),
    /** Discovery document members plugins add (since plugin API 1.2). */
    metadata: new Registry<MetadataMember>('discovery member', (m) => m.name),
    /** Token bindings by the `cnf` member they fill (DPoP's `jkt` under `TOKEN_BINDING`; since plugin API 1.3). */
    tokenBinding: new Registry<TokenBinding>('token binding', bindingId, tokenBindingProblems),
    /** Client authentication methods plugins provide, by method (mutual TLS; since plugin API 1.3). */
    clientAuthentications: new Registry<ClientAuthentication>(
      'client authentication method',
      (m) => m.method,
      clientAuthenticationProblems,
    ),
    /** The resolver of /authorize's `request_uri` (since plugin API 1.3): one per server. */
    requestResolvers: new Registry<AuthorizationRequestResolver>(
      'authorization request resolver',
      () => REQUEST_RESOLVER_ID,
      requestResolverProblems,
    ),
    /** The verifier of signed request objects, `request` (since plugin API 1.3): one per server. */
    requestObjects: new Registry<RequestObjectVerifier>(
      'request object verifier',
      () => REQUEST_OBJECT_ID,
      requestObjectVerifierProblems,
    ),
    /** First-party apps plugins register (since plugin API 1.3). */
    apps: new Registry<AppConfig>('app', (a) => a.client_id),
    /** Path prefixes CORS answers on for plugins' routes (since plugin API 1.3). */
    corsPrefixes: new Registry<{ prefix: string }>('CORS path prefix', (p) => p.prefix),
    /** `prompt` values of /authorize plugins answer (`create`, since plugin API 1.3): one handler each. */
    prompts: new Registry<PromptHandler>('prompt handler', (h) => h.prompt, promptHandlerProblems),
    /** Client policies by name (`api.clientPolicy`, since plugin API 1.3, decision 80). */
    clientPolicies: new Registry<ClientPolicy>('client policy', (p) => p.name, clientPolicyProblems),
    /** Who hears of ended sessions (`api.sessionEnded`, since plugin API 1.3), by plugin. */
    sessionEnded: new Registry<{ plugin: string; listener: SessionEndListener }>(
      'session end listener',
      (l) => l.plugin,
    ),
  };
}

/** A plugin imported and checked, ready to register. */
export interface ResolvedPlugin {
  plugin: GatehousePlugin<unknown>;
  /** Its entry in `plugins:` (registration order may differ: dependencies first). */
  index: number;
  version: string;
  source: string;
  options: unknown;
}

export type { LoadedPluginInfo } from '@gatehouse-auth/plugin-api';

/**
 * Imports every configured plugin and checks it: shape, apiVersion range, unique name,
 * options, dependencies. Any failure is a BootError naming the plugin; nothing is skipped.
 */
export async function resolvePlugins(entries: PluginEntry[], baseDir: string): Promise<ResolvedPlugin[]> {
  const resolved: ResolvedPlugin[] = [];
  const byName = new Map<string, number>();
  for (const [index, entry] of entries.entries()) {
    const label = entry.name ?? entry.path!;
    const where = `plugins[${index}]`;
    const file = locate(entry, baseDir, where);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (err) {
      throw new BootError(
        'PLUGIN_IMPORT_FAILED',
        `plugin ${label} (${where}): import failed: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    const plugin = (mod.default ?? mod) as GatehousePlugin<unknown>;
    checkShape(plugin, label, where);
    if (!semver.validRange(plugin.apiVersion) || !semver.satisfies(PLUGIN_API_VERSION, plugin.apiVersion)) {
      throw new BootError(
        'PLUGIN_API_MISMATCH',
        `plugin ${plugin.name} (${where}): needs plugin API ${plugin.apiVersion}, this core provides ${PLUGIN_API_VERSION}`,
      );
    }
    const first = byName.get(plugin.name);
    if (first !== undefined) {
      throw new BootError('PLUGIN_DUPLICATE', `plugin ${plugin.name} (${where}): already loaded as plugins[${first}]`);
    }
    byName.set(plugin.name, index);
    const options = plugin.options
      ? parsed(
          plugin.options,
          entry.options,
          ['plugins', index, 'options'],
          (issue) => new BootError('PLUGIN_OPTIONS_INVALID', `plugin ${plugin.name}: ${issue}`),
        )
      : entry.options;
    resolved.push({ plugin, index, version: packageVersion(file), source: file, options });
  }
  // Their CLI commands' shapes; whether a name is free is the `gatehouse` command's to check
  // (@gatehouse-auth/cli, decision 73): the names are its.
  for (const { plugin } of resolved) {
    for (const command of plugin.commands ?? []) {
      const problems = commandProblems((command ?? {}) as unknown as Record<string, unknown>);
      const label = `plugin ${plugin.name}: command ${JSON.stringify(command?.name)}`;
      if (problems.length) throw new BootError('PLUGIN_INVALID', `${label} ${problems.join(', ')}`);
    }
  }
  return orderByDependencies(resolved);
}

/** `value` as `schema` parses it; else `fail` of its first issue, described at `path` (a config key). */
export function parsed<T>(
  schema: ZodType<T>,
  value: unknown,
  path: (string | number)[],
  fail: (issue: string) => BootError,
): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw fail(describeIssue({ ...issue, path: [...path, ...issue.path] }));
}

/** What registration needs from the composition root. */
export interface RegistrationDeps {
  extensions: Extensions;
  services: Services;
  logger: Logger;
  recordsFor: (plugin: string) => RecordStore;
  /** Registers a service a plugin provides (it throws for a duplicate or a protected name). */
  provide: (name: string, service: unknown, owner: string) => void;
  /** Where `api.dependency` checks go. */
  dependencies: DependencyChecks;
  /** The web API of one plugin, reading its catalogs when a page first needs them. */
  webFor: (plugin: string, catalogs: () => PluginCatalogs) => WebApi;
  /** Where `api.securityEvents` listeners go. */
  securityEvents: Pick<SecurityEvents, 'listen'>;
  /** Where `api.serve` functions go: run by `listen` once the public port is open. */
  serve: (plugin: string, start: (serving: ServingInfo) => Promise<Served | void>) => void;
  /** Where `api.job` kinds go (the core's are registered already). */
  jobs: Pick<JobQueue, 'register' | 'enqueue'>;
}

/** Calls each plugin's register with its own options, child logger and extension points. */
export async function registerPlugins(plugins: ResolvedPlugin[], deps: RegistrationDeps): Promise<LoadedPluginInfo[]> {
  const { extensions, services, logger, recordsFor, provide, dependencies, webFor, securityEvents, serve, jobs } = deps;
  const infos: LoadedPluginInfo[] = [];
  const checks: { plugin: string; where: string; run: () => void | Promise<void> }[] = [];
  for (const { plugin, index, version, source, options } of plugins) {
    const invalid = (message: string) => new BootError('PLUGIN_INVALID', `plugin ${plugin.name}: ${message}`);
    // What the plugin added, by kind, for `gatehouse plugins` (the shared root's keys `/#n` as `/`).
    const contributes: Record<string, string[]> = {};
    const listed = (kind: string, id: string) => void (contributes[kind] ??= []).push(id);
    const adder =
      <T>(kind: string, registry: Registry<T>) =>
      (item: T) =>
        listed(kind, registry.add(item, plugin.name).replace(/^\/#\d+$/, '/'));
    let catalogs: PluginCatalogs = { en: {} };
    const api: PluginApi = {
      plugin: { name: plugin.name, version },
      logger: logger.child({ plugin: plugin.name }),
      methods: { add: adder('methods', extensions.methods) },
      grants: { add: adder('grants', extensions.grants) },
      fdsRules: { add: adder('fdsRules', extensions.fdsRules) },
      channels: { add: adder('channels', extensions.channels) },
      routes: { add: adder('routes', extensions.routes) },
      services,
      records: recordsFor(plugin.name),
      check: (run) => void checks.push({ plugin: plugin.name, where: `plugins[${index}]`, run }),
      provide: (name, service) => {
        if (!plugin.provides?.includes(name)) throw invalid(`provides service "${name}" without naming it in provides`);
        const problems = REPLACEABLE_SERVICES[name]?.((service ?? {}) as Record<string, unknown>) ?? [];
        if (problems.length) throw invalid(`service "${name}" ${problems.join(', ')}`);
        provide(name, service, plugin.name);
        listed('services', name);
        promised.delete(name);
      },
      dependency: (name, check) => {
        try {
          dependencies.add(name, plugin.name, check);
        } catch (err) {
          throw invalid((err as Error).message);
        }
        listed('dependencies', name);
      },
      web: webFor(plugin.name, () => catalogs),
      discovery: (members) => {
        for (const [name, value] of Object.entries(members)) adder('metadata', extensions.metadata)({ name, value });
      },
      authorizationRequests: adder('requestResolvers', extensions.requestResolvers),
      requestObjects: adder('requestObjects', extensions.requestObjects),
      prompt: adder('prompts', extensions.prompts),
      clientPolicy: adder('clientPolicies', extensions.clientPolicies),
      app: (input) => adder('apps', extensions.apps)(parsed(appSchema, input, ['app'], invalid)),
      cors: (prefixes) => {
        for (const prefix of prefixes) {
          if (!prefix.startsWith('/')) throw invalid(`CORS prefix "${prefix}" must start with /`);
          adder('cors', extensions.corsPrefixes)({ prefix });
        }
      },
      messages: (given) => {
        if (!given.en) throw invalid('messages need an "en" catalog');
        catalogs = given;
      },
      securityEvents: (listener) => {
        securityEvents.listen(plugin.name, listener);
        contributes.securityEvents = ['listener'];
      },
      serve: (start) => {
        serve(plugin.name, start);
        contributes.serve = ['listener'];
      },
      sessionEnded: (listener) => {
        if (typeof listener !== 'function') throw invalid('sessionEnded takes a function');
        extensions.sessionEnded.add({ plugin: plugin.name, listener }, plugin.name);
        contributes.sessionEnded = ['listener'];
      },
      job: (job) => {
        if (typeof job?.kind !== 'string' || !job.kind || typeof job.run !== 'function')
          throw invalid('a background job needs a kind and a run function');
        try {
          jobs.register(job);
        } catch (err) {
          throw new BootError('PLUGIN_DUPLICATE_ID', `plugin ${plugin.name}: ${(err as Error).message}`);
        }
        listed('jobs', job.kind);
        return (payload, expiresAt) => jobs.enqueue({ kind: job.kind, payload, expiresAt });
      },
      tokenBinding: adder('tokenBinding', extensions.tokenBinding),
      clientAuthentication: adder('clientAuthentications', extensions.clientAuthentications),
    };
    const promised = new Set(plugin.provides ?? []);
    await asBootError('PLUGIN_REGISTER_FAILED', `plugin ${plugin.name}: register failed`, () =>
      plugin.register(api, options),
    );
    if (promised.size) throw invalid(`names ${[...promised].join(', ')} in provides but did not provide it`);
    for (const command of plugin.commands ?? []) listed('commands', command.name);
    infos.push({ name: plugin.name, version, apiVersion: plugin.apiVersion, source, contributes });
  }
  for (const check of checks)
    await asBootError('PLUGIN_CHECK_FAILED', `plugin ${check.plugin} (${check.where})`, check.run);
  return infos;
}

/** Runs a plugin's code: what it throws becomes a BootError (`code`, `prefix: message`) unless it is one. */
async function asBootError(code: string, prefix: string, run: () => unknown): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (isBootError(err)) throw err;
    throw new BootError(code, `${prefix}: ${(err as Error).message}`, { cause: err });
  }
}

const FOREIGN_SCOPE = '@gatehouse/';

function locate(entry: PluginEntry, baseDir: string, where: string): string {
  if (entry.path) {
    const target = path.resolve(baseDir, entry.path);
    if (!existsSync(target)) {
      throw new BootError('PLUGIN_NOT_FOUND', `plugin ${entry.path} (${where}): no file or directory at ${target}`);
    }
    if (!statSync(target).isDirectory()) return target;
    try {
      // A package directory: its package.json "main" (or index.js) is the entry point.
      return createRequire(path.join(target, 'package.json')).resolve(target);
    } catch {
      throw new BootError('PLUGIN_NOT_FOUND', `plugin ${entry.path} (${where}): ${target} has no entry point`);
    }
  }
  const name = entry.name!;
  // The @gatehouse scope on the public registry is an unrelated project's: never load from it.
  if (name.startsWith(FOREIGN_SCOPE)) {
    throw new BootError(
      'PLUGIN_NOT_FOUND',
      `plugin ${name} (${where}): Gatehouse's packages are ${name.replace(FOREIGN_SCOPE, '@gatehouse-auth/')}; the ${FOREIGN_SCOPE.slice(0, -1)} scope on npm belongs to another project`,
    );
  }
  // Resolve from the working directory first (an operator's own node_modules), then from core.
  for (const from of [path.join(process.cwd(), 'noop.js'), import.meta.filename]) {
    const found = resolvePackage(name, from);
    if (found) return found;
  }
  // Never "npm install <what was typed>": a misspelt name may be someone else's package.
  const nearest = nearestInstalled(name);
  throw new BootError(
    'PLUGIN_NOT_FOUND',
    `plugin ${name} (${where}): package not found; ` +
      (nearest
        ? `did you mean ${nearest}?`
        : 'if it is a third-party plugin, check the name with its publisher before installing it'),
  );
}

/** The installed Gatehouse package closest to a name that did not resolve (at most 3 edits away). */
function nearestInstalled(name: string): string | null {
  const installed = new Set<string>();
  for (const from of [path.join(process.cwd(), 'noop.js'), import.meta.filename]) {
    for (const dir of createRequire(from).resolve.paths(name) ?? []) {
      const scope = path.join(dir, '@gatehouse-auth');
      if (existsSync(scope)) for (const pkg of readdirSync(scope)) installed.add(`@gatehouse-auth/${pkg}`);
    }
  }
  let best: { name: string; distance: number } | null = null;
  for (const candidate of installed) {
    const distance = editDistance(name, candidate);
    if (distance <= 3 && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name ?? null;
}

/** Levenshtein distance, for names of a few dozen characters. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The ESM entry point of an installed package: its `exports["."]` under the import/node/default
 * conditions, else `main`, else index.js. (require.resolve would miss import-only packages.)
 */
function resolvePackage(name: string, from: string): string | null {
  for (const dir of createRequire(from).resolve.paths(name) ?? []) {
    const root = path.join(dir, name);
    const pkgFile = path.join(root, 'package.json');
    if (!existsSync(pkgFile)) continue;
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports?: unknown; main?: string };
    const target = exportTarget(pkg.exports) ?? pkg.main ?? 'index.js';
    const file = path.resolve(root, target);
    return existsSync(file) ? file : null;
  }
  return null;
}

function exportTarget(exports: unknown): string | null {
  if (typeof exports === 'string') return exports;
  if (!exports || typeof exports !== 'object') return null;
  const map = exports as Record<string, unknown>;
  const dot = Object.keys(map).some((k) => k.startsWith('.')) ? map['.'] : map;
  if (typeof dot === 'string') return dot;
  if (dot && typeof dot === 'object') {
    for (const condition of ['import', 'node', 'default']) {
      const hit = exportTarget((dot as Record<string, unknown>)[condition]);
      if (hit) return hit;
    }
  }
  return null;
}

function checkShape(plugin: GatehousePlugin<unknown>, label: string, where: string): void {
  const problems: string[] = [];
  if (!plugin || typeof plugin !== 'object') problems.push('has no default export');
  else {
    if (typeof plugin.name !== 'string' || !plugin.name) problems.push('has no name');
    if (typeof plugin.apiVersion !== 'string') problems.push('declares no apiVersion');
    if (typeof plugin.register !== 'function') problems.push('has no register function');
    if (plugin.dependencies !== undefined && !Array.isArray(plugin.dependencies))
      problems.push('dependencies is not a list');
    if (plugin.provides !== undefined && !Array.isArray(plugin.provides)) problems.push('provides is not a list');
    if (plugin.commands !== undefined && !Array.isArray(plugin.commands)) problems.push('commands is not a list');
  }
  if (problems.length) {
    throw new BootError('PLUGIN_INVALID', `plugin ${label} (${where}): not a Gatehouse plugin: ${problems.join(', ')}`);
  }
}

/** Registration order: dependencies first, otherwise config order. */
function orderByDependencies(plugins: ResolvedPlugin[]): ResolvedPlugin[] {
  const byName = new Map(plugins.map((p) => [p.plugin.name, p]));
  for (const { plugin } of plugins) {
    for (const dep of plugin.dependencies ?? []) {
      if (!byName.has(dep)) {
        throw new BootError(
          'PLUGIN_MISSING_DEPENDENCY',
          `plugin ${plugin.name}: depends on plugin ${dep}, which is not configured`,
        );
      }
    }
  }
  const ordered: ResolvedPlugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: ResolvedPlugin, chain: string[]) => {
    const name = p.plugin.name;
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      throw new BootError(
        'PLUGIN_DEPENDENCY_CYCLE',
        `plugin ${name}: dependency cycle ${[...chain, name].join(' -> ')}`,
      );
    }
    state.set(name, 'visiting');
    for (const dep of p.plugin.dependencies ?? []) visit(byName.get(dep)!, [...chain, name]);
    state.set(name, 'done');
    ordered.push(p);
  };
  // Plugins that provide services first: every other plugin then sees the replacement.
  const providersFirst = [
    ...plugins.filter((p) => p.plugin.provides?.length),
    ...plugins.filter((p) => !p.plugin.provides?.length),
  ];
  for (const p of providersFirst) visit(p, []);
  return ordered;
}

function packageVersion(file: string): string {
  let dir = path.dirname(file);
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        const json = JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string };
        if (json.version) return json.version;
      } catch {
        // an unreadable package.json: keep looking upwards
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}
