#!/usr/bin/env node
// The core never names a method: every method id comes from the registry. Fails (one line per
// hit, exit 1) when a string literal in core/src or in the contract (core/plugin-api/src) is one
// of the spec's method ids; comments
// (doc examples) are not code and do not count. The spec's field table (field names, not
// method ids) is what the core may know.
// Usage: node .ci/check-core-names.mjs [repository root, default: the working directory]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const METHOD_IDS = [
  'SMS',
  'EMAIL',
  'IVR',
  'TOTP',
  'BACKUPCODE',
  'PASSWORD',
  'PUSH',
  'PATTERN',
  'TOUCHID',
  'FACE',
  'FIDO2',
];
const LITERAL = new RegExp(`(['"\`])(${METHOD_IDS.join('|')})\\1`, 'g');

const root = path.resolve(process.argv[2] ?? process.cwd());
const sources = [path.join(root, 'core', 'src'), path.join(root, 'core', 'plugin-api', 'src')];
const problems = [];

/** The file with comments blanked out (kept line breaks, so line numbers stay right). */
function withoutComments(text) {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`])\/\/.*$/gm, (m, before) => before + ' '.repeat(m.length - before.length));
}

function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(file);
    else if (/\.[cm]?ts$/.test(entry.name)) {
      withoutComments(readFileSync(file, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          for (const m of line.matchAll(LITERAL)) {
            problems.push(
              `${path.relative(root, file)}:${i + 1}: names method ${m[2]}; methods come from the registry`,
            );
          }
        });
    }
  }
}

// A tree without the contract package (an older checkout, a test's) has only the core to read.
for (const src of sources) if (existsSync(src)) walk(src);
if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log('check-core-names: neither the core nor the contract names a method');
