import { readFileSync } from 'node:fs';
import type { CliCommand } from '@gatehouse-auth/core';
import { importUsers } from './import.js';

/**
 * `gatehouse users import FILE [--skip-invalid] [--dry-run]` (docs/migration.md): what it
 * printed when it was the core's, to the letter. Exit 0 when every row was imported (or, on a
 * dry run, checked out), 1 when a row was bad or there were none.
 */
export const usersImport: CliCommand = {
  name: 'users import',
  usage: 'FILE [--skip-invalid] [--dry-run]',
  description: [
    'users from a JSON-lines file, with password hashes (argon2, bcrypt, scrypt,',
    'PBKDF2) and TOTP seeds as each method imports them (docs/migration.md);',
    'a bad row (reported with its line) imports nothing, unless --skip-invalid',
  ].join('\n'),
  options: { 'skip-invalid': { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
  positionals: [{ name: 'FILE', needs: 'a FILE (JSON lines, docs/migration.md)' }],
  async run(cli) {
    const file = cli.positionals[0]!;
    const dryRun = cli.values['dry-run'] === true;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      cli.warn(`cannot read ${file}: ${(err as Error).message}`);
      return 1;
    }
    // The methods' import hooks come from the plugins the config loads: the server is composed, not served.
    const server = await cli.server();
    const started = Date.now();
    const result = await importUsers(
      text,
      { users: server.userImport, method: (id) => server.method(id), logger: server.logger },
      { skipInvalid: cli.values['skip-invalid'] === true, dryRun },
    );
    for (const p of result.problems) cli.warn(`line ${p.line}: ${p.message}`);
    const kinds = Object.entries(result.credentials).map(([method, n]) => `${method}: ${n}`);
    const detail = kinds.length ? ` (credentials ${kinds.join(', ')})` : '';
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (dryRun) {
      cli.print(`dry run: ${result.valid} rows valid, ${result.problems.length} bad${detail}\n`);
    } else if (result.imported > 0) {
      const skipped = result.problems.length ? `, skipped ${result.problems.length} bad rows` : '';
      cli.print(`imported ${result.imported} users${detail}${skipped} in ${seconds} s\n`);
      await server.services.events.record({ type: 'cli.users_imported', data: { count: result.imported } });
    } else {
      const why = result.problems.length ? `${result.problems.length} bad rows` : 'no rows';
      cli.print(`imported nothing: ${why}\n`);
    }
    return result.problems.length > 0 || result.valid === 0 ? 1 : 0;
  },
};
