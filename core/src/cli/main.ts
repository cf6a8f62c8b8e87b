#!/usr/bin/env node
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { runPrimary } from '../cluster.js';
import { loadConfigFile, resolveConfigFile, type LoadedConfig } from '../config/load.js';
import { ApiError, isBootError, isProtocolError } from '../errors.js';
import type { ClientAdmin } from '@gatehouse-auth/plugin-api';
import { buildApp, checkConfig, type Gatehouse } from '../gatehouse.js';
import { createLogger } from '../http/logging.js';
import { exitOnSignals, listen } from '../server.js';
import { portFields } from '../plugins/serve.js';
import { openDatabase } from '../storage/database.js';
import { migrate } from '../storage/migrate.js';
import { UserService } from '../users/users.js';
import { UserProfiles } from '../users/profile.js';
import { recordStore } from '../storage/stores.js';
import { KeyStore } from '../oauth/keys.js';
import { loadSecretBox, systemClock } from '../services.js';
import { openDriver } from '../storage/drivers.js';
import { Sql } from '../storage/sql.js';
import { CORE_GROUPS, CORE_SINGLES, MOVED_COMMANDS, type PluginCommand } from './command-table.js';
import { pluginCommands, pluginUsage, runPluginCommand } from './plugin-commands.js';

const USAGE = `Usage: gatehouse <command> [--config FILE]

Commands:
  start                 serve HTTP (default config: config/default.yaml or $GATEHOUSE_CONFIG)
  migrate               apply pending database migrations and exit
  config check          compose the server as start would (plugins registered and checked), without serving
  plugins               list the plugins the config loads, with versions
  users create --username NAME [--email EMAIL] [--phone +E164]
  users list [--json]
  users profile --username NAME [--set CLAIM=VALUE ...] [--unset CLAIM ...]
                        show or change a user's OIDC profile claims (name, given_name, locale, ...)
  apps list [--json]    the apps: the config's (read-only) and those in the database
  apps create --app JSON
                        store an app (a config-style apps[] entry); prints it with its secret, shown once
  apps update --client-id ID --app JSON
                        change a database app (a JSON merge patch: null removes a key); tokens stay
  apps rotate-secret --client-id ID [--overlap SECONDS]
                        a new secret; the previous one works for SECONDS more (default 86400)
  apps delete --client-id ID
                        delete a database app and revoke its grants and tokens
  keys rotate           publish a new signing key; it signs after oauth.key_activation_delay
  keys list             show the published signing keys
  plugin new            moved: npx @gatehouse-auth/create-plugin <method|fds|channel|grant> NAME [--dir DIR]
`;

/** The core's options (a plugin's command has its own, with `--config` and `--help`). */
const OPTIONS = {
  config: { type: 'string', short: 'c' },
  username: { type: 'string' },
  email: { type: 'string' },
  phone: { type: 'string' },
  json: { type: 'boolean' },
  set: { type: 'string', multiple: true },
  unset: { type: 'string', multiple: true },
  dir: { type: 'string' },
  app: { type: 'string' },
  'client-id': { type: 'string' },
  overlap: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Whether the words are a command of the core's own (`help` aside: it lists the plugins' too). */
function isCoreCommand(command: string | undefined, sub: string | undefined): boolean {
  if (command === undefined || command === 'help') return false;
  if (CORE_SINGLES.includes(command)) return true;
  return Object.hasOwn(CORE_GROUPS, command) && sub !== undefined && CORE_GROUPS[command]!.includes(sub);
}

/**
 * What is wrong with the words of a command line, or null: a command group without one of its
 * subcommands (the core's and the plugins'), or a word too many (`--username al ice` would
 * otherwise create "al").
 */
function commandProblem(positionals: string[], groups: Record<string, readonly string[]> = CORE_GROUPS): string | null {
  const [command, sub] = positionals;
  const subs = command !== undefined && Object.hasOwn(groups, command) ? groups[command] : undefined;
  if (subs && (sub === undefined || !subs.includes(sub))) {
    const given = sub === undefined ? '' : ` (not "${sub}")`;
    return `${command} needs one of: ${subs.join(', ')}${given}`;
  }
  // `plugin new KIND NAME` passes its words on to the command that replaced it.
  const words = command === 'plugin' ? 4 : subs ? 2 : 1;
  const extra = positionals[words];
  if (extra === undefined) return null;
  return `unexpected argument "${extra}" (a value with spaces needs quotes: --username 'al ice')`;
}

/** `--set name=Alice --set address={"country":"DE"} --unset nickname`: a JSON merge patch. */
function profilePatch(set: string[], unset: string[]): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const pair of set) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new ApiError(400, 'INVALID_FIELD', `--set ${pair}: expected CLAIM=VALUE`, { field: pair });
    const value = pair.slice(eq + 1);
    // An object (address) is given as JSON; everything else is a plain string.
    const name = pair.slice(0, eq);
    try {
      patch[name] = value.startsWith('{') ? JSON.parse(value) : value;
    } catch {
      throw new ApiError(400, 'INVALID_FIELD', `--set ${name}: not valid JSON`, { field: name });
    }
  }
  for (const name of unset) patch[name] = null;
  return patch;
}

async function main(argv: string[]): Promise<number> {
  // A plugin's command has options the core does not know: its words are found first.
  const loose = parseArgs({ args: argv, allowPositionals: true, strict: false, options: OPTIONS });
  if (loose.values.help === true || !isCoreCommand(loose.positionals[0], loose.positionals[1])) {
    return viaPlugins(argv, loose.positionals, loose.values.help === true, loose.values.config);
  }
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const [command, sub] = positionals;
  const problem = commandProblem(positionals);
  if (problem) return fail(problem);
  if (command === 'users' && sub === 'create' && !values.username) {
    return fail('users create needs --username NAME (and optionally --email, --phone)');
  }
  if (command === 'apps') {
    const needs = {
      create: ['app'],
      update: ['client-id', 'app'],
      'rotate-secret': ['client-id'],
      delete: ['client-id'],
    };
    const missing = (needs[sub as keyof typeof needs] ?? []).find((o) => values[o as 'app'] === undefined);
    if (missing) return fail(`apps ${sub} needs --${missing}`);
  }
  const loaded = (): LoadedConfig => loadConfigFile(resolveConfigFile(values.config));

  switch (`${command}${sub ? ' ' + sub : ''}`) {
    case 'start': {
      const cfg = loaded();
      const wanted = cfg.config.server.workers;
      const workers = wanted === 0 ? availableParallelism() : wanted;
      const isWorker = cluster.isWorker;
      if (workers > 1 && cluster.isPrimary) {
        await runPrimary(cfg, workers, createLogger(cfg.config.log.level));
        return -1; // keep running
      }
      // A worker's primary already migrated and runs the purge job.
      const gatehouse = await buildApp(cfg, { migrate: !isWorker });
      const running = await listen(gatehouse);
      exitOnSignals(running, gatehouse);
      if (!isWorker) gatehouse.startBackgroundJobs();
      gatehouse.logger.info(
        {
          port: running.port,
          ...portFields(running.listeners),
          issuer: gatehouse.config.issuer,
          plugins: gatehouse.plugins.map((p) => p.name),
        },
        'gatehouse listening',
      );
      return -1; // keep running
    }
    case 'migrate': {
      const { config } = loaded();
      const logger = createLogger(config.log.level);
      const db = await openDatabase({ url: config.database.url, logger });
      const applied = await migrate(db, logger);
      await db.close();
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      return 0;
    }
    case 'config check': {
      const cfg = loaded();
      const { plugins } = await checkConfig(cfg);
      process.stdout.write(`config OK: ${cfg.file} (${plugins.length} plugins, ${cfg.config.apps.length} apps)\n`);
      return 0;
    }
    case 'plugins': {
      // Errors only: a plugin's start-up warning (say, the dev outbox route) would break the table.
      const gatehouse = await buildApp(loaded(), { logger: createLogger('error') });
      const rows = gatehouse.plugins.map((p) => [
        p.name,
        p.version,
        p.apiVersion,
        Object.entries(p.contributes)
          .map(([kind, ids]) => `${kind}: ${ids.join(', ')}`)
          .join('; '),
      ]);
      printTable(['plugin', 'version', 'api', 'contributes'], rows);
      await gatehouse.close();
      return 0;
    }
    case 'users create':
    case 'users list':
    case 'users profile': {
      const { config, file } = loaded();
      const logger = createLogger('warn');
      const db = await openDatabase({ url: config.database.url, logger });
      await migrate(db, logger);
      const sql = new Sql(await openDriver(db, config.database.url, 2));
      try {
        const users = new UserService(sql);
        if (sub === 'create') {
          const user = await users.create({
            username: values.username ?? '',
            email: values.email,
            phone: values.phone,
          });
          process.stdout.write(`${JSON.stringify(user)}\n`);
        } else if (sub === 'profile') {
          const user = values.username ? await users.findByIdentifier(values.username) : null;
          if (!user) return fail(`no user ${JSON.stringify(values.username ?? '')} (give --username)`, 1);
          const profiles = new UserProfiles(recordStore(sql, systemClock, 'gatehouse:profile'), systemClock);
          const patch = profilePatch(values.set ?? [], values.unset ?? []);
          const profile = Object.keys(patch).length
            ? await profiles.update(user.id, patch)
            : await profiles.get(user.id);
          process.stdout.write(`${JSON.stringify(profile)}\n`);
        } else {
          const list = await users.list({ limit: 1000 });
          if (values.json) process.stdout.write(`${JSON.stringify(list)}\n`);
          else {
            printTable(
              ['id', 'username', 'email', 'phone', 'status'],
              list.map((u) => [u.id, u.username, u.email ?? '', u.phone ?? '', u.status]),
            );
            // The demo keeps a database of its own: say which one this was.
            const count = `${list.length} user${list.length === 1 ? '' : 's'}`;
            process.stdout.write(`(${count} in ${redactedUrl(config.database.url)}, config ${file})\n`);
          }
        }
      } finally {
        await sql.close();
        await db.close();
      }
      return 0;
    }
    case 'apps list':
    case 'apps create':
    case 'apps update':
    case 'apps rotate-secret':
    case 'apps delete': {
      // The whole server is composed (not served): apps are checked with the plugins' keys, and
      // running nodes hear of the change (the peer bus, or their poll).
      const gatehouse = await buildApp(loaded(), { logger: createLogger('error') });
      try {
        // The service is a plugin's (decision 0063): without it the config cannot manage apps.
        const apps = managedApps(gatehouse);
        if (!apps) return fail(`apps ${sub} needs the plugin ${MANAGEMENT} in the config's plugins:`, 1);
        const actor = { via: 'cli', userId: 'cli', ip: null };
        const clientId = values['client-id'] ?? '';
        let answer: unknown;
        if (sub === 'list') {
          const list = await apps.list();
          if (!values.json) {
            printTable(
              ['client_id', 'source', 'auth', 'name'],
              list.map((a) => [a.client_id, a.source, a.token_endpoint_auth_method, a.name]),
            );
            return 0;
          }
          answer = list;
        } else if (sub === 'create') answer = await apps.create(actor, jsonObject(values.app!));
        else if (sub === 'update') answer = await apps.patch(actor, clientId, jsonObject(values.app!));
        else if (sub === 'rotate-secret') {
          const overlap = values.overlap === undefined ? undefined : Number(values.overlap);
          answer = await apps.rotateSecret(actor, clientId, overlap === undefined ? {} : { overlapSeconds: overlap });
        } else answer = await apps.delete(actor, clientId);
        process.stdout.write(`${JSON.stringify(answer)}\n`);
      } finally {
        await gatehouse.close();
      }
      return 0;
    }
    case 'keys rotate':
    case 'keys list': {
      const { config } = loaded();
      const logger = createLogger('warn');
      const db = await openDatabase({ url: config.database.url, logger });
      await migrate(db, logger);
      const sql = new Sql(await openDriver(db, config.database.url, 2));
      try {
        const keys = new KeyStore(sql, systemClock, loadSecretBox(config, logger), config.oauth.signing_algs);
        if (sub === 'rotate') {
          // Old keys stay published until every token they signed has expired.
          // The apps stored in the database count too (decision 51): their entries as written.
          const stored = (await sql.select<{ settings: string }>('SELECT settings FROM clients')).map(
            (r) => JSON.parse(r.settings) as Record<string, unknown>,
          );
          const ttls = [...config.apps, ...stored].flatMap((a) => [a.access_token_ttl, a.id_token_ttl]);
          const longest = Math.max(3600, ...ttls.filter((n) => typeof n === 'number'));
          for (const { kid, alg, activatesAt } of await keys.rotate(config.oauth.key_activation_delay, longest)) {
            process.stdout.write(`published ${alg} key ${kid}; it signs from ${activatesAt.toISOString()}\n`);
          }
        } else {
          const { keys: published } = await keys.jwks();
          printTable(
            ['kid', 'alg', 'use'],
            published.map((k) => [String(k.kid), String(k.alg), String(k.use)]),
          );
        }
      } finally {
        await sql.close();
        await db.close();
      }
      return 0;
    }
    case 'plugin new': {
      // The template is its own package (decision 35): the core does not depend on it, and a
      // server's installation has no use for it. The user's own arguments, ready to paste.
      const [, , kind, name] = positionals;
      const args = [kind ? shellWord(kind) : '<method|fds|channel|grant>', name ? shellWord(name) : 'NAME'];
      if (values.dir !== undefined) args.push('--dir', shellWord(values.dir));
      return fail(`plugin new has moved; run: npx @gatehouse-auth/create-plugin ${args.join(' ')}`);
    }
    default:
      process.stderr.write(`gatehouse: unknown command "${positionals.join(' ')}"\n${USAGE}`);
      return 2;
  }
}

/**
 * Help, and every command line that is not one of the core's commands: a plugin's command (the
 * config's plugins are imported to find it), a moved one, a group without its subcommand, or an
 * unknown one.
 */
async function viaPlugins(argv: string[], words: string[], help: boolean, config: unknown): Promise<number> {
  const [command, sub] = words;
  let loaded: LoadedConfig | undefined;
  let table = new Map<string, PluginCommand>();
  let unread: unknown;
  try {
    loaded = loadConfigFile(resolveConfigFile(typeof config === 'string' ? config : undefined));
    table = await pluginCommands(loaded);
  } catch (err) {
    unread = err;
  }
  const usage = () => USAGE + pluginUsage(table);
  if (help || !command || command === 'help') {
    process.stdout.write(usage());
    return command || help ? 0 : 2;
  }
  const found = (sub !== undefined ? table.get(`${command} ${sub}`) : undefined) ?? table.get(command);
  if (found) return runPluginCommand(found, argv, loaded!, fail);
  const name = `${command} ${sub}`;
  if (Object.hasOwn(MOVED_COMMANDS, name)) {
    // Without the config, what to add it to is unknown: its error is the answer.
    if (unread !== undefined) throw unread;
    return fail(
      `${name} is a command of the plugin ${MOVED_COMMANDS[name]}, which ${loaded!.file} does not load: add it to plugins:`,
    );
  }
  // `gatehouse users` alone: the group's subcommands, the core's, the plugins' and the moved ones.
  const others = [...table.keys(), ...Object.keys(MOVED_COMMANDS)].filter((n) => n.startsWith(`${command} `));
  const subs = new Set([
    ...(Object.hasOwn(CORE_GROUPS, command!) ? CORE_GROUPS[command!]! : []),
    ...others.map((n) => n.split(' ')[1]!),
  ]);
  const problem = subs.size ? commandProblem(words, { [command!]: [...subs] }) : null;
  if (problem) return fail(problem);
  const why =
    unread === undefined ? '' : `(the plugins' commands are not listed: ${(unread as Error).message.split('\n')[0]})\n`;
  process.stderr.write(`gatehouse: unknown command "${words.join(' ')}"\n${usage()}${why}`);
  return 2;
}

/** One line on stderr, and the exit code to return (2: the command line was wrong). */
function fail(message: string, code = 2): number {
  process.stderr.write(`gatehouse: ${message}\n`);
  return code;
}

/** The package that provides `clientAdmin` in a first-party installation. */
const MANAGEMENT = '@gatehouse-auth/management';

/** The `clientAdmin` service a plugin provides; null when no configured plugin does. */
function managedApps(gatehouse: Gatehouse): ClientAdmin | null {
  try {
    return gatehouse.container.cradle.services.resolve<ClientAdmin>('clientAdmin');
  } catch {
    return null;
  }
}

/** `--app '{"client_id": ...}'`: a JSON object, or one line saying it is not. */
function jsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'INVALID_APP', '--app: not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ApiError(400, 'INVALID_APP', '--app: must be a JSON object (an apps[] entry)');
  return value as Record<string, unknown>;
}

/** A database URL without its password. */
function redactedUrl(url: string): string {
  return url.replace(/^([a-z][\w+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

/** `word` as a shell word: as is when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write([line(header), ...rows.map(line)].join('\n') + '\n');
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    // One line an operator can act on: which key or plugin, and what is wrong.
    const code = (err as NodeJS.ErrnoException)?.code;
    if (isBootError(err)) process.stderr.write(err.message.replace(/^/gm, 'gatehouse: ') + '\n');
    else if (isProtocolError(err)) process.stderr.write(`gatehouse: ${err.code}: ${err.message}\n`);
    else if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      // A mistyped option: what was wrong and where the list is, not a stack trace (nor Node's
      // advice on positionals that start with '-').
      const option = /^Unknown option '([^']+)'/.exec((err as Error).message)?.[1];
      const what = option ? `unknown option ${option}` : (err as Error).message.split(/\.\s|\n/)[0];
      process.stderr.write(`gatehouse: ${what} (gatehouse help lists the options)\n`);
      process.exit(2);
    } else if (code === 'EADDRINUSE') {
      const { address, port } = err as NodeJS.ErrnoException & { address?: string; port?: number };
      process.stderr.write(
        `gatehouse: ${address ?? ''}:${port ?? ''} is already in use (another Gatehouse, or npm run demo?); stop it or set PORT\n`,
      );
    } else process.stderr.write(`gatehouse: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
