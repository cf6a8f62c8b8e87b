import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { BootError } from '../errors.js';
import { formatPath, interpolateEnv } from '../util/interpolate.js';
import { configSchema, type GatehouseConfig } from './schema.js';

export interface LoadedConfig {
  config: GatehouseConfig;
  /** Absolute path of the file it came from, or undefined for an in-memory config. */
  file?: string;
  /** Directory that relative plugin paths are resolved against. */
  baseDir: string;
}

export const DEFAULT_CONFIG_FILE = 'config/default.yaml';

/** `--config` wins over GATEHOUSE_CONFIG, which wins over config/default.yaml. */
export function resolveConfigFile(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag ?? env.GATEHOUSE_CONFIG ?? DEFAULT_CONFIG_FILE);
}

export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new BootError('CONFIG_NOT_FOUND', `cannot read config file ${file}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const where = first.linePos?.[0] ? ` (line ${first.linePos[0].line}, column ${first.linePos[0].col})` : '';
    throw new BootError('CONFIG_INVALID', `${file}${where}: ${first.message.split('\n')[0]}`);
  }
  const config = parseConfig(doc.toJS() ?? {}, env);
  return { config, file, baseDir: path.dirname(file) };
}

/** Top-level sections that became plugins' options, and where each went. */
const MOVED_SECTIONS: Record<string, string> = {
  // Decision 37.
  tracing:
    'the OTLP exporter is now the plugin @gatehouse-auth/tracing-otlp; move these keys to its options under plugins:',
  // Decision 67.
  metrics:
    'the Prometheus exporter is now the plugin @gatehouse-auth/metrics-prometheus; list it under plugins: with these keys (without enabled) as its options',
  // Decision 39: the console and the account page are plugins, off unless listed.
  console:
    'the admin console is now the plugin @gatehouse-auth/page-console; list it under plugins: with these keys (without enabled) as its options',
  account:
    'the account page is now the plugin @gatehouse-auth/page-account; list it under plugins: with these keys (without enabled) as its options',
  // Decision 35 (issue 26): the security notices to users.
  notifications:
    'the security notices to users are now the plugin @gatehouse-auth/notices-security; list it under plugins: with these keys as its options',
  // Decision 65: the apps' `branding` keys stay where they are, read by the plugin.
  branding:
    'the branding is now the plugin @gatehouse-auth/branding; list it under plugins: with these keys as its options',
  // Decision 72: the section held only the Redis keys.
  limits:
    'counting the shared limits in Redis is now the plugin @gatehouse-auth/limits-redis; list it under plugins: with options url (was redis_url) and timeout_ms (was redis_timeout_ms)',
};

/**
 * Interpolates `${VAR}`, applies the twelve-factor overrides (PORT, DATABASE_URL, ISSUER,
 * LOG_LEVEL) and validates against the one schema. Throws a BootError whose message is one
 * line: `apps[0].redirect_uris[1]: must be an absolute URL`.
 */
export function parseConfig(raw: unknown, env: NodeJS.ProcessEnv = process.env): GatehouseConfig {
  const missing: string[] = [];
  const tree = interpolateEnv(raw, env, [], missing) as Record<string, unknown>;
  if (missing.length > 0) throw new BootError('CONFIG_INVALID', everyProblem(missing));
  if (tree === null || typeof tree !== 'object' || Array.isArray(tree)) {
    throw new BootError('CONFIG_INVALID', '(root): must be a mapping of keys to values');
  }
  dropNulls(tree);
  for (const [key, moved] of Object.entries(MOVED_SECTIONS)) {
    // A deployment must not start silently without what it configured there.
    if (key in tree) throw new BootError('CONFIG_INVALID', `${key}: ${moved}`);
  }
  applyEnvOverrides(tree, env);
  const result = configSchema.safeParse(tree, { reportInput: true });
  if (!result.success) {
    throw new BootError('CONFIG_INVALID', everyProblem(result.error.issues.map(describeIssue)));
  }
  return result.data;
}

function applyEnvOverrides(tree: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const section = (key: string): Record<string, unknown> => {
    const current = tree[key];
    if (current && typeof current === 'object' && !Array.isArray(current)) return current as Record<string, unknown>;
    return (tree[key] = {});
  };
  if (env.PORT) section('server').port = env.PORT;
  if (env.DATABASE_URL) section('database').url = env.DATABASE_URL;
  if (env.ISSUER) tree.issuer = env.ISSUER;
  if (env.LOG_LEVEL) section('log').level = env.LOG_LEVEL;
}

/** In YAML an empty section (`admin:` with only comments) is null: treat it as absent. */
function dropNulls(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach(dropNulls);
  for (const [key, value] of Object.entries(node)) {
    if (value === null) delete (node as Record<string, unknown>)[key];
    else dropNulls(value);
  }
}

/** Every problem, one line each (an operator fixes them all in one go, not one per start). */
function everyProblem(lines: string[]): string {
  return lines.length ? lines.join('\n') : 'invalid config';
}

/** One readable line per schema issue, naming the key path. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  let where = formatPath(issue.path);
  let what: string;
  switch (issue.code) {
    case 'invalid_type':
      what = issue.input === undefined ? 'is required' : `must be ${article(issue.expected)}`;
      break;
    case 'unrecognized_keys':
      where = formatPath([...issue.path, issue.keys[0] ?? '']);
      what = 'is not a known key';
      break;
    case 'invalid_value':
      what = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'too_small':
      what =
        issue.origin === 'string'
          ? `must be at least ${String(issue.minimum)} characters`
          : issue.origin === 'array'
            ? `must have at least ${String(issue.minimum)} entries`
            : `must be at least ${String(issue.minimum)}`;
      break;
    case 'too_big':
      what = `must be at most ${String(issue.maximum)}`;
      break;
    default:
      what = issue.message;
  }
  return `${where}: ${what}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
