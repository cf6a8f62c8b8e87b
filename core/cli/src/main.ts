#!/usr/bin/env node
import { parseArgs } from 'node:util';
import {
  buildApp,
  checkConfig,
  createLogger,
  isBootError,
  isProtocolError,
  loadConfigFile,
  migrateDatabase,
  publishedSigningKeys,
  resolveConfigFile,
  rotateSigningKeys,
  type LoadedConfig,
} from '@gatehouse-auth/core';
import { CORE_GROUPS, CORE_SINGLES, MOVED_COMMANDS, type PluginCommand } from './command-table.js';
import { pluginCommands, pluginUsage, runPluginCommand, unexpectedWord, type Tokens } from './plugin-commands.js';
import { runServer } from './serve.js';
import { printTable } from './table.js';

const USAGE = `Usage: gatehouse <command> [--config FILE]

Commands:
  start                 serve HTTP (default config: config/default.yaml or $GATEHOUSE_CONFIG)
  migrate               apply pending database migrations and exit
  config check          compose the server as start would (plugins registered and checked), without serving
  plugins               list the plugins the config loads, with versions
  keys rotate           publish a new signing key; it signs after oauth.key_activation_delay
  keys list             show the published signing keys
  plugin new            moved: npx @gatehouse-auth/create-plugin <method|fds|channel|grant> NAME [--dir DIR]
`;

/** The core's options (a plugin's command has its own, with `--config` and `--help`). */
const OPTIONS = {
  config: { type: 'string', short: 'c' },
  dir: { type: 'string' },
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
 * subcommands (the core's and the plugins'), or a word too many (a value with spaces, unquoted).
 */
function commandProblem(
  positionals: string[],
  tokens: Tokens,
  groups: Record<string, readonly string[]> = CORE_GROUPS,
): string | null {
  const [command, sub] = positionals;
  const subs = command !== undefined && Object.hasOwn(groups, command) ? groups[command] : undefined;
  if (subs && (sub === undefined || !subs.includes(sub))) {
    const given = sub === undefined ? '' : ` (not "${sub}")`;
    return `${command} needs one of: ${subs.join(', ')}${given}`;
  }
  // `plugin new KIND NAME` passes its words on to the command that replaced it.
  const words = command === 'plugin' ? 4 : subs ? 2 : 1;
  return positionals[words] === undefined ? null : unexpectedWord(tokens, words);
}

async function main(argv: string[]): Promise<number> {
  // A plugin's command has options the core does not know: its words are found first.
  const loose = parseArgs({ args: argv, allowPositionals: true, strict: false, tokens: true, options: OPTIONS });
  if (loose.values.help === true || !isCoreCommand(loose.positionals[0], loose.positionals[1])) {
    return viaPlugins(argv, loose, loose.values.help === true, loose.values.config);
  }
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: OPTIONS,
  });
  const [command, sub] = positionals;
  const problem = commandProblem(positionals, tokens);
  if (problem) return fail(problem);
  const loaded = (): LoadedConfig => loadConfigFile(resolveConfigFile(values.config));

  switch (`${command}${sub ? ' ' + sub : ''}`) {
    case 'start': {
      const cfg = loaded();
      // A plugin's command named like another stops start-up (`config check`'s and `plugins`' too).
      await pluginCommands(cfg);
      await runServer(cfg);
      return -1; // keep running
    }
    case 'migrate': {
      const applied = await migrateDatabase(loaded().config);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      return 0;
    }
    case 'config check': {
      const cfg = loaded();
      await pluginCommands(cfg);
      const { plugins } = await checkConfig(cfg);
      process.stdout.write(`config OK: ${cfg.file} (${plugins.length} plugins, ${cfg.config.apps.length} apps)\n`);
      return 0;
    }
    case 'plugins': {
      const cfg = loaded();
      await pluginCommands(cfg);
      // Errors only: a plugin's start-up warning (say, the dev outbox route) would break the table.
      const gatehouse = await buildApp(cfg, { logger: createLogger('error') });
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
    case 'keys rotate': {
      for (const { kid, alg, activatesAt } of await rotateSigningKeys(loaded().config)) {
        process.stdout.write(`published ${alg} key ${kid}; it signs from ${activatesAt.toISOString()}\n`);
      }
      return 0;
    }
    case 'keys list': {
      const published = await publishedSigningKeys(loaded().config);
      printTable(
        ['kid', 'alg', 'use'],
        published.map((k) => [k.kid, k.alg, k.use]),
      );
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
async function viaPlugins(
  argv: string[],
  { positionals: words, tokens }: { positionals: string[]; tokens: Tokens },
  help: boolean,
  config: unknown,
): Promise<number> {
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
  const problem = subs.size ? commandProblem(words, tokens, { [command!]: [...subs] }) : null;
  if (problem) return fail(problem);
  const why =
    unread === undefined ? '' : `(the plugins' commands are not listed: ${(unread as Error).message.split('\n')[0]})\n`;
  process.stderr.write(`gatehouse: unknown command "${words.join(' ')}"\n${usage()}${why}`);
  return 2;
}

/** One line on stderr, and exit code 2: the command line was wrong. */
function fail(message: string): number {
  process.stderr.write(`gatehouse: ${message}\n`);
  return 2;
}

/** `word` as a shell word: as is when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
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
