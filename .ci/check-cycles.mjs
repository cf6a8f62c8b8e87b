#!/usr/bin/env node
// Fails (exit 1, one line per cycle) when modules of core/src, or of the contract
// (core/plugin-api/src), import each other in a circle,
// type imports included: a cycle is a design knot long before it is a runtime error.
// Usage: node .ci/check-cycles.mjs [repository root, default: the working directory]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? process.cwd());
const sources = [path.join(root, 'core', 'src'), path.join(root, 'core', 'plugin-api', 'src')];
const IMPORT = /(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g;

const graph = new Map();
function walkSources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) walkSources(file);
    else if (entry.name.endsWith('.ts')) {
      const deps = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) =>
        path.resolve(dir, m[1]).replace(/\.js$/, '.ts'),
      );
      graph.set(file, deps);
    }
  }
}
// A tree without the contract package (an older checkout, a test's) has only the core to read.
for (const src of sources) if (existsSync(src)) walkSources(src);

// Tarjan's strongly connected components: every component of more than one module is a cycle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(path.relative(root, w));
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const v of graph.keys()) if (!index.has(v)) visit(v);

if (cycles.length) {
  for (const c of cycles) console.error(`import cycle: ${c.join(' <-> ')}`);
  process.exit(1);
}
console.log(`check-cycles: ${graph.size} core modules, no import cycle`);
