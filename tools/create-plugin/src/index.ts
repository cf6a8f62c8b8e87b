import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `create-gatehouse-plugin` can write. */
export const PLUGIN_KINDS = ['method', 'fds', 'channel', 'grant'] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** A refusal the command prints as one line (exit 1): a bad name, a directory in use. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** The package's templates: `<kind>/` (index.js, test/) and the README all kinds share. */
export const TEMPLATES_DIR = fileURLToPath(new URL('../templates/', import.meta.url));

const NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
const PLACEHOLDER = /__([A-Z][A-Z_]*[A-Z])__/g;

/** `@acme/method-secret-question` → `secret-question` (the part after the kind's prefix). */
function shortName(name: string, kind: PluginKind): string {
  const bare = name.replace(/^@[^/]+\//, '');
  return bare.startsWith(`${kind}-`) ? bare.slice(kind.length + 1) : bare;
}

/** The values of the templates' `__PLACEHOLDERS__` for a plugin `name` of `kind`. */
export function placeholders(kind: PluginKind, name: string): Record<string, string> {
  const short = shortName(name, kind);
  return {
    NAME: name,
    KIND: kind,
    KIND_LABEL: kind === 'fds' ? 'FDS rule' : kind,
    METHOD_ID: short.replace(/[^a-z0-9]/gi, '').toUpperCase(),
    RULE_ID: short.replace(/[^a-z0-9]+/gi, '_').toLowerCase(),
    CHANNEL_ID: short,
    GRANT_TYPE: `urn:${name.replace(/^@/, '').replace(/\//g, ':')}`,
  };
}

/** `text` with every `__KEY__` replaced by `values[KEY]`; an unknown key is a bug in a template. */
function fill(text: string, values: Record<string, string>, file: string): string {
  return text.replace(PLACEHOLDER, (match, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`${file}: unknown placeholder ${match}`);
    return value;
  });
}

/** The files under `dir`, as paths relative to it, sorted. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const rel = path.join(prefix, entry.name);
      return entry.isDirectory() ? filesUnder(dir, rel) : [rel];
    })
    .sort();
}

/**
 * Writes a plugin package of `kind` named `name` into `dir`: package.json, README.md, and the
 * kind's template (index.js, ESM with type checking from the core's declarations, and a test
 * that passes as written: node --test, against `@gatehouse-auth/testing`). Returns the files
 * written.
 */
export function writePluginTemplate(kind: PluginKind, name: string, dir: string): string[] {
  if (!NAME.test(name)) throw new TemplateError(`plugin name "${name}" is not an npm package name`);
  if (existsSync(dir) && readdirSync(dir).length) throw new TemplateError(`${dir} exists and is not empty`);
  const values = placeholders(kind, name);
  const read = (file: string) => fill(readFileSync(path.join(TEMPLATES_DIR, file), 'utf8'), values, file);
  const all: Record<string, string> = {
    'package.json': `${JSON.stringify(packageJson(name, kind), null, 2)}\n`,
    'README.md': read('README.md'),
  };
  for (const file of filesUnder(path.join(TEMPLATES_DIR, kind))) all[file] = read(path.join(kind, file));
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return Object.keys(all).map((file) => path.join(dir, file));
}

function packageJson(name: string, kind: PluginKind) {
  return {
    name,
    version: '0.1.0',
    description: `A Gatehouse ${kind === 'fds' ? 'FDS rule' : kind} plugin`,
    type: 'module',
    main: './index.js',
    exports: { '.': './index.js' },
    files: ['index.js'],
    keywords: ['gatehouse-plugin'],
    scripts: { test: 'node --test' },
    // One copy of the core: the server's. The plugin names it as a peer, and as a dev
    // dependency for its own tests, with the testing kit.
    peerDependencies: { '@gatehouse-auth/core': '^0.1.0' },
    devDependencies: { '@gatehouse-auth/core': '^0.1.0', '@gatehouse-auth/testing': '^0.1.0' },
  };
}
