import type { Served } from '@gatehouse-auth/plugin-api';
import { BootError } from '../errors.js';

/** What the plugins started (`api.serve`, `primary` hooks), as one: their ports by name, one close. */
export interface StartedTogether {
  ports: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

/** One plugin's start: `api.serve`'s function, or its `primary` hook. */
export interface PluginStart {
  plugin: string;
  start: () => Served | void | Promise<Served | void>;
}

/**
 * Starts each in turn. When one throws, those already started are closed and its error is
 * thrown: a half-started server must not keep a listener open. Closing goes in reverse order.
 */
export async function startAll(starts: readonly PluginStart[]): Promise<StartedTogether> {
  const started: Served[] = [];
  const ports: Record<string, number> = {};
  const close = async () => {
    for (const served of started.reverse()) await served.close();
  };
  try {
    for (const { plugin, start } of starts) {
      const served = await start();
      if (!served) continue;
      started.push(served);
      for (const [name, port] of Object.entries(served.ports ?? {})) {
        // Logs and `RunningServer.listeners` name each port once.
        if (Object.hasOwn(ports, name)) {
          throw new BootError('PLUGIN_DUPLICATE_ID', `plugin ${plugin}: a listener named "${name}" is already open`);
        }
        ports[name] = port;
      }
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { ports, close };
}
