import { BootError, type CliCommand, type GatehousePlugin } from '@gatehouse-auth/core';

/** The core's commands that take a subcommand, with theirs: `gatehouse keys` alone says which there are. */
export const CORE_GROUPS: Readonly<Record<string, readonly string[]>> = {
  config: ['check'],
  keys: ['rotate', 'list'],
  plugin: ['new'],
};

/** The core's commands of one word. */
export const CORE_SINGLES: readonly string[] = ['start', 'migrate', 'plugins', 'help'];

/** The plugin of the management services, and of the `users` and `apps` commands (decisions 63, 68). */
export const MANAGEMENT = '@gatehouse-auth/management';

/** Commands that moved to a first-party plugin: without it, the CLI names the plugin. */
export const MOVED_COMMANDS: Readonly<Record<string, string>> = Object.fromEntries([
  ...['users create', 'users list', 'users profile'].map((name) => [name, MANAGEMENT]),
  ['users import', '@gatehouse-auth/user-import'],
  ...['list', 'create', 'update', 'rotate-secret', 'delete'].map((sub) => [`apps ${sub}`, MANAGEMENT]),
]);

/** A plugin's command, with the plugin that added it. */
export interface PluginCommand {
  command: CliCommand;
  plugin: string;
}

/**
 * The plugins' commands by name (their shapes the core's loader checked), none with a name the
 * core or another plugin has: a one-word name may not be a group's either, nor the first word of
 * a two-word one (`gatehouse backup run` would not reach `backup`).
 */
export function commandTable(plugins: readonly { plugin: GatehousePlugin<unknown> }[]): Map<string, PluginCommand> {
  const table = new Map<string, PluginCommand>();
  // The first words of every command, the core's and the plugins', and whose they are.
  const groups = new Map<string, string>(Object.keys(CORE_GROUPS).map((group) => [group, 'the core']));
  /** Whose a name is already: the core's, a plugin's (the same name, or a one-word one it would hide), or none. */
  const owner = (first: string, sub: string | undefined): string | undefined => {
    if (CORE_SINGLES.includes(first) || (Object.hasOwn(CORE_GROUPS, first) && CORE_GROUPS[first]!.includes(sub!)))
      return 'the core';
    const same = table.get(sub ? `${first} ${sub}` : first) ?? (sub ? table.get(first) : undefined);
    return same ? `plugin ${same.plugin}` : sub ? undefined : groups.get(first);
  };
  for (const { plugin } of plugins) {
    for (const command of plugin.commands ?? []) {
      const label = `plugin ${plugin.name}: command ${JSON.stringify(command.name)}`;
      const [first, sub] = command.name.split(' ') as [string, string | undefined];
      const taken = owner(first, sub);
      if (taken) throw new BootError('PLUGIN_DUPLICATE_ID', `${label} is already ${taken}'s (gatehouse ${first})`);
      table.set(command.name, { command, plugin: plugin.name });
      if (sub && !groups.has(first)) groups.set(first, `plugin ${plugin.name}`);
    }
  }
  return table;
}
