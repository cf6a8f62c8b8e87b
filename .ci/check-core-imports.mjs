#!/usr/bin/env node
// The core never depends on a plugin, and the plugin contract never depends on the core (one line
// per problem, exit 1 if any):
// - no file under core/src imports a package of the scope other than @gatehouse-auth/core and the
//   contract @gatehouse-auth/plugin-api (plugins, tools, the testing kit, the CLI), nor a
//   relative or absolute path into plugins/, tools/ or core/cli/. Plugins reach the core through
//   its public API; the core reaches plugins only through the loader, by the names in config; the
//   `gatehouse` command (core/cli) is a front-end on the core, never part of it (decision 73).
// - no file under core/plugin-api/src imports a package of the scope at all, nor a path outside
//   core/plugin-api/ (core/src, plugins/, tools/): the contract is what the core implements, so
//   an implementation change cannot silently change it (decision 58).
// Usage: node .ci/check-core-imports.mjs [repository root, default: the working directory]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { importsOf } from './imports.mjs';

const SCOPE = '@gatehouse-auth/';
const CORE = `${SCOPE}core`;
const CONTRACT = `${SCOPE}plugin-api`;
const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx)$/;

const root = path.resolve(process.argv[2] ?? process.cwd());
const src = path.join(root, 'core', 'src');
const outside = ['plugins', 'tools', 'core/cli'].map((dir) => path.join(root, dir));
const problems = [];
const contract = path.join(root, 'core', 'plugin-api');

/**
 * Visits every import of the source files under `dir`: `where` (file:line), the specifier, and
 * either the scoped package it names or the path it resolves to. Answers the number of files.
 */
function forEachImport(dir, visit) {
  let count = 0;
  for (const file of sourceFiles(dir)) {
    count++;
    for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
      const where = `${path.relative(root, file)}:${line}`;
      if (specifier.startsWith(SCOPE)) visit({ where, specifier, name: specifier.split('/').slice(0, 2).join('/') });
      else if (specifier.startsWith('.') || path.isAbsolute(specifier))
        visit({ where, specifier, target: path.resolve(path.dirname(file), specifier) });
    }
  }
  return count;
}

const files = forEachImport(src, ({ where, specifier, name, target }) => {
  if (name && name !== CORE && name !== CONTRACT)
    problems.push(`${where}: imports '${specifier}'; the core must not depend on ${name}`);
  const into = target && outside.find((dir) => target === dir || target.startsWith(dir + path.sep));
  if (into)
    problems.push(
      `${where}: imports '${specifier}', a path into ${path.relative(root, into)}/; the core must not depend on it`,
    );
});

// The contract: nothing of the scope, no path out of its own package.
const contractFiles = forEachImport(path.join(contract, 'src'), ({ where, specifier, name, target }) => {
  if (name) problems.push(`${where}: imports '${specifier}'; the plugin contract must not depend on ${name}`);
  if (target && !target.startsWith(contract + path.sep)) {
    const rel = path.relative(root, target);
    problems.push(
      `${where}: imports '${specifier}', a path out of core/plugin-api/ (${rel}); the plugin contract must not depend on it`,
    );
  }
});

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(
  `check-core-imports: ${files} core modules, none imports a plugin` +
    (contractFiles ? `; ${contractFiles} contract modules, none imports the core` : ''),
);

function* sourceFiles(dir) {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (SOURCE.test(entry.name)) yield full;
  }
}
