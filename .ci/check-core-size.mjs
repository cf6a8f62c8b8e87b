#!/usr/bin/env node
// The core's size is a ratchet (decision 58): `core/src` may not grow past the ceiling in
// .ci/core-size.json, and a change that shrinks it by more than the slack must lower the ceiling,
// so what a move took out cannot creep back. Counted as issue 26 counts it: every line of every
// .ts file under core/src (`find core/src -name '*.ts' | xargs cat | wc -l`).
// Usage: node .ci/check-core-size.mjs [repository root, default: the working directory]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? process.cwd());
const settingsFile = path.join(root, '.ci', 'core-size.json');
const { ceiling, target, slack } = JSON.parse(readFileSync(settingsFile, 'utf8'));

function* tsFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(full);
    else if (entry.name.endsWith('.ts')) yield full;
  }
}

let lines = 0;
for (const file of tsFiles(path.join(root, 'core', 'src'))) {
  const text = readFileSync(file, 'utf8');
  lines += text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const settings = path.relative(process.cwd(), settingsFile);
if (lines > ceiling) {
  console.error(
    `core/src is ${lines} lines, ${lines - ceiling} above its ceiling of ${ceiling}. A page, endpoint or ` +
      `feature belongs in a plugin (docs/plugins.md); if the core must own it, raise "ceiling" in ${settings} ` +
      `in the same change, with a decision record saying why.`,
  );
  process.exit(1);
}
if (lines < ceiling - slack) {
  console.error(
    `core/src shrank to ${lines} lines: lower "ceiling" in ${settings} to ${lines} so it cannot grow back.`,
  );
  process.exit(1);
}
console.log(`core/src: ${lines} lines (ceiling ${ceiling}, target ${target}: ${Math.max(0, lines - target)} to go).`);
