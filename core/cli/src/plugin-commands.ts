import {
  buildApp,
  cliServer,
  createLogger,
  resolvePlugins,
  type CliContext,
  type Gatehouse,
  type LoadedConfig,
} from '@gatehouse-auth/core';
import { parseArgs } from 'node:util';
import { commandTable, type PluginCommand } from './command-table.js';
import { printTable } from './table.js';

/**
 * The commands of the config's plugins (imported and checked, not registered: no database is
 * opened). Throws for a command named like the CLI's or another plugin's.
 */
export async function pluginCommands(loaded: LoadedConfig): Promise<Map<string, PluginCommand>> {
  return commandTable(await resolvePlugins(loaded.config.plugins, loaded.baseDir));
}

/** The usage of the plugins' commands, in the core's layout: after the core's own. */
export function pluginUsage(table: ReadonlyMap<string, PluginCommand>): string {
  if (table.size === 0) return '';
  const lines = ['', "Commands of the config's plugins:"];
  for (const { command, plugin } of table.values()) {
    lines.push(`  ${command.name}${command.usage ? ` ${command.usage}` : ''}`);
    for (const line of [...command.description.split('\n'), `(${plugin})`]) lines.push(`${' '.repeat(24)}${line}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Runs a plugin's command with its own options (and the core's `--config`, `--help`), after
 * checking its words: a required one missing or one too many is exit 2 before `run`. The server
 * is composed when the command asks for it, and closed after.
 */
export async function runPluginCommand(
  found: PluginCommand,
  argv: string[],
  loaded: LoadedConfig,
  fail: (message: string) => number,
): Promise<number> {
  const { command } = found;
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: { ...command.options, config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
  });
  const words = positionals.slice(command.name.split(' ').length);
  const declared = command.positionals ?? [];
  const missing = declared.find((p, i) => p.needs !== undefined && words[i] === undefined);
  if (missing) return fail(`${command.name} needs ${missing.needs}`);
  const extra = words[declared.length];
  if (extra !== undefined) return fail(unexpectedWord(tokens, command.name.split(' ').length + declared.length));
  let composing: Promise<Gatehouse> | undefined;
  const cli: CliContext = {
    positionals: words,
    values,
    configFile: loaded.file ?? '',
    server: async () => cliServer(await (composing ??= buildApp(loaded, { logger: createLogger('error') }))),
    print: (text) => void process.stdout.write(text),
    table: printTable,
    warn: (message) => void process.stderr.write(`gatehouse: ${message}\n`),
  };
  try {
    return await command.run(cli);
  } finally {
    // A composition that failed has closed what it opened; its error is the command's.
    await composing?.then(
      (gatehouse) => gatehouse.close(),
      () => undefined,
    );
  }
}

/**
 * The refusal of the command line's `index`th word (counting from 0) as one too many; after an
 * option's value, with the quoting that keeps both (`--username al ice`: `--username 'al ice'`).
 */
export function unexpectedWord(tokens: Tokens, index: number): string {
  const at = tokens.filter((t) => t.kind === 'positional')[index];
  const before = at && tokens[tokens.indexOf(at) - 1];
  const option = before?.kind === 'option' && !before.inlineValue && before.value !== undefined ? before : null;
  const example = option ? `: ${option.rawName} '${option.value} ${at!.value}'` : '';
  return `unexpected argument "${at?.value ?? ''}" (a value with spaces needs quotes${example})`;
}

/** A command line as `parseArgs` reads it, word by word. */
export type Tokens = NonNullable<ReturnType<typeof parseArgs>['tokens']>;
