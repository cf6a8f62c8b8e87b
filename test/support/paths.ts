import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (two levels above test/support). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** test/fixtures */
export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures');

/** A fixture plugin (file or package directory) by its name under test/fixtures/plugins. */
export function fixturePlugin(name: string): string {
  return path.join(FIXTURES, 'plugins', name);
}

/** A fixture config file by its name under test/fixtures/config. */
export function fixtureConfig(name: string): string {
  return path.join(FIXTURES, 'config', name);
}

/** The compiled CLI, @gatehouse-auth/cli (build it first with `npx tsc -b core/cli`). */
export const CLI = path.join(REPO_ROOT, 'core', 'cli', 'dist', 'main.js');
