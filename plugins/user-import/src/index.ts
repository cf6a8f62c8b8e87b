import { definePlugin, z } from '@gatehouse-auth/core';
import { usersImport } from './command.js';

export { importUsers, type ImportDeps, type ImportOptions, type ImportProblem, type ImportResult } from './import.js';
export { usersImport } from './command.js';

/**
 * `gatehouse users import FILE` (decisions 49, 64): users from another system with their
 * password hashes and TOTP seeds, each credential made by its method's `enrollment.import`, all
 * of a file or none. A CLI command only: it adds no route, method or service to a running server.
 */
export default definePlugin({
  name: '@gatehouse-auth/user-import',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  commands: [usersImport],
  register() {
    // Nothing to register: the command asks for the composed server when it runs.
  },
});
