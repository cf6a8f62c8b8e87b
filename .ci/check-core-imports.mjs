#!/usr/bin/env node
// The core never depends on a plugin (one line per problem, exit 1 if any): no file under
// core/src imports a package of the scope other than @gatehouse-auth/core (plugins, tools, the
// testing kit), nor a relative or absolute path into plugins/ or tools/. Plugins reach the core
// through its public API; the core reaches plugins only through the loader, by the names in config.
// Usage: node .ci/check-core-imports.mjs [repository root, default: the working directory]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { importsOf } from './imports.mjs';

const SCOPE = '@gatehouse-auth/';
const CORE = `${SCOPE}core`;
const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx)$/;

const root = path.resolve(process.argv[2] ?? process.cwd());
const src = path.join(root, 'core', 'src');
const outside = ['plugins', 'tools'].map((dir) => path.join(root, dir));
const problems = [];
let files = 0;

for (const file of sourceFiles(src)) {
  files++;
  for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
    const where = `${path.relative(root, file)}:${line}`;
    if (specifier.startsWith(SCOPE)) {
      const name = specifier.split('/').slice(0, 2).join('/');
      if (name !== CORE) problems.push(`${where}: imports '${specifier}'; the core must not depend on ${name}`);
    } else if (specifier.startsWith('.') || path.isAbsolute(specifier)) {
      const target = path.resolve(path.dirname(file), specifier);
      const into = outside.find((dir) => target === dir || target.startsWith(dir + path.sep));
      if (into) {
        problems.push(
          `${where}: imports '${specifier}', a path into ${path.basename(into)}/; the core must not depend on it`,
        );
      }
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`check-core-imports: ${files} core modules, none imports a plugin`);

function* sourceFiles(dir) {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (SOURCE.test(entry.name)) yield full;
  }
}
