#!/usr/bin/env node
// Checks the plugin packages, the testing kit (tools/testing), the site kit (tools/site-kit) and
// the `gatehouse` command (core/cli, a front-end on the core's public API, decision 73) against
// the core's contract (one line per problem, exit 1 if any):
// - @gatehouse-auth/core is a peerDependency of each, never a regular dependency
//   (two copies of the core in node_modules would mean two registries);
// - their code imports only the public API: '@gatehouse-auth/core', plus the testing kit
//   '@gatehouse-auth/testing' in plugin tests and the site kit '@gatehouse-auth/site-kit' (a
//   library on the public API, decision 39); never a deep path, never a relative path into core/,
//   never the contract package '@gatehouse-auth/plugin-api' itself (the core re-exports it, and
//   one import path keeps a plugin on the contract its core implements; decision 58).
// Usage: node .ci/check-plugins.mjs [repository root, default: the working directory]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { importsOf } from './imports.mjs';

const CORE = '@gatehouse-auth/core';
const CONTRACT = '@gatehouse-auth/plugin-api';
const TESTING = '@gatehouse-auth/testing';
const SITE_KIT = '@gatehouse-auth/site-kit';
const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist']);

const root = path.resolve(process.argv[2] ?? process.cwd());
const coreDir = path.join(root, 'core');
const problems = [];
const report = (file, line, message) =>
  problems.push(`${path.relative(root, file)}${line ? `:${line}` : ''}: ${message}`);

const pluginsDir = path.join(root, 'plugins');
const plugins = existsSync(pluginsDir)
  ? readdirSync(pluginsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => path.join(pluginsDir, d.name))
      .sort()
  : [];

for (const dir of plugins) {
  checkPackageJson(dir);
  for (const sub of ['src', 'test']) {
    for (const file of sourceFiles(path.join(dir, sub))) checkImports(file, sub === 'test');
  }
}

// The kits are held to the same rules: the testing kit is what a third party's plugin tests run
// on, the site kit is part of the console's and the account page's code.
const kits = ['testing', 'site-kit'].map((name) => path.join(root, 'tools', name)).filter((dir) => existsSync(dir));
for (const kit of kits) {
  checkPackageJson(kit);
  for (const file of sourceFiles(path.join(kit, 'src'))) checkImports(file, false);
}
const hasKit = kits.length > 0;

// The command is held to them too: one front-end on the library, which an embedder could write.
const cli = path.join(coreDir, 'cli');
const hasCli = existsSync(cli);
if (hasCli) {
  checkPackageJson(cli);
  for (const file of sourceFiles(path.join(cli, 'src'))) checkImports(file, false, cli);
}

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
const kitNames = kits.map((dir) => path.basename(dir)).join(' and ');
const checked = [
  `${plugins.length} plugins`,
  ...(hasKit ? [`the ${kitNames} kit${kits.length > 1 ? 's' : ''}`] : []),
  ...(hasCli ? ['the CLI'] : []),
];
console.log(
  `check-plugins: ${checked.slice(0, -1).join(', ')}${checked.length > 1 ? ' and ' : ''}${checked.at(-1)} OK`,
);

function checkPackageJson(dir) {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) return report(dir, 0, 'has no package.json');
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return report(file, 0, `is not valid JSON: ${err.message}`);
  }
  if (pkg.dependencies?.[CORE] !== undefined) {
    report(file, 0, `lists ${CORE} in dependencies; it must be a peerDependency`);
  }
  if (pkg.peerDependencies?.[CORE] === undefined) {
    report(file, 0, `does not list ${CORE} in peerDependencies`);
  }
}

function* sourceFiles(dir) {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) yield* sourceFiles(full);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      yield full;
    }
  }
}

/** `own`: the package's directory, when it lies under core/ (a path within it is its own). */
function checkImports(file, isTest, own) {
  for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
    if (specifier === TESTING || specifier.startsWith(`${TESTING}/`)) {
      if (!isTest) report(file, line, `imports '${specifier}', which only tests may use`);
    } else if (specifier.startsWith(`${SITE_KIT}/`)) {
      report(file, line, `imports the deep path '${specifier}'; import from '${SITE_KIT}'`);
    } else if (specifier === `${CORE}/testing`) {
      report(file, line, `imports '${specifier}', which is now '${TESTING}'`);
    } else if (specifier === CONTRACT || specifier.startsWith(`${CONTRACT}/`)) {
      report(file, line, `imports '${specifier}'; import the contract from '${CORE}', which re-exports it`);
    } else if (specifier.startsWith(`${CORE}/`)) {
      report(file, line, `imports the deep path '${specifier}'; import from '${CORE}'`);
    } else if (specifier.startsWith('.') || path.isAbsolute(specifier)) {
      const target = path.resolve(path.dirname(file), specifier);
      const rel = path.relative(coreDir, target);
      const inOwn = own !== undefined && target.startsWith(own + path.sep);
      if (!inOwn && (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)))) {
        report(file, line, `imports '${specifier}', a path into core/; import from '${CORE}'`);
      }
    }
  }
}
