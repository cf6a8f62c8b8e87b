import { placeholders } from '@gatehouse-auth/plugin-api';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BootError } from '../errors.js';

/** The core's own catalogs (core/locales/<locale>.json), shipped with the package. */
export const BUILTIN_CATALOGS = fileURLToPath(new URL('../../locales/', import.meta.url));

/** The locale every page falls back to, and the catalog every other one is checked against. */
export const BASE_LOCALE = 'en';

/** Message key → text, as a catalog file holds them. */
export type Catalog = Record<string, string>;

/** `de.json`, `de-AT.json`, `pt-BR.json`: a BCP 47 language tag, the language in lower case. */
const CATALOG_FILE = /^([a-z]{2,3}(?:-[A-Za-z0-9]{1,8})*)\.json$/;
/** A message file is text for a few pages: anything larger is a mistake. */
const MAX_FILE_BYTES = 512 * 1024;
/**
 * Keys a catalog may have that English lacks, because their English comes from elsewhere: a
 * method's texts (its plugin's page) and the login API's error codes (the server's message).
 */
export const OPEN_PREFIXES = ['method.', 'js.error.'];

function problem(where: string, message: string): BootError {
  return new BootError('CONFIG_INVALID', `${where}: ${message}`);
}

/** The `<locale>.json` files of a directory, by locale. Other files are not messages and are left alone. */
function readDirectory(dir: string, where: string): Map<string, Catalog> {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    throw problem(where, `cannot read the directory ${dir}: ${(err as Error).message}`);
  }
  const catalogs = new Map<string, Catalog>();
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const locale = CATALOG_FILE.exec(name)?.[1];
    if (!locale) throw problem(where, `${name} is not named after a language tag (de.json, de-AT.json)`);
    catalogs.set(locale, readCatalog(path.join(dir, name), `${where}: ${name}`));
  }
  return catalogs;
}

function readCatalog(file: string, where: string): Catalog {
  let parsed: unknown;
  try {
    if (statSync(file).size > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw problem(where, (err as Error).message);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw problem(where, 'must be a JSON object of message keys to texts');
  }
  for (const [key, text] of Object.entries(parsed)) {
    if (typeof text !== 'string') throw problem(where, `${key} must be a string`);
  }
  return parsed as Catalog;
}

/** Each key of the core's catalogs with the placeholders the page fills in (any catalog's). */
function placeholdersByKey(catalogs: Iterable<Catalog>): Map<string, Set<string>> {
  const known = new Map<string, Set<string>>();
  for (const catalog of catalogs) {
    for (const [key, text] of Object.entries(catalog)) {
      const names = known.get(key) ?? new Set<string>();
      for (const name of placeholders(text)) names.add(name);
      known.set(key, names);
    }
  }
  return known;
}

/**
 * A deployment's catalog may replace the core's messages (with no placeholder the page does not
 * fill in: it would show as `{name}`) and add those of methods and of the API's error codes; a
 * typo in a key fails at start-up instead of leaving a page untranslated.
 */
export function checkCatalog(catalog: Catalog, known: ReadonlyMap<string, ReadonlySet<string>>, where: string): void {
  for (const [key, text] of Object.entries(catalog)) {
    const given = known.get(key);
    if (!given) {
      if (!OPEN_PREFIXES.some((prefix) => key.startsWith(prefix))) throw problem(where, `unknown message key "${key}"`);
      continue;
    }
    const unknown = placeholders(text).find((name) => !given.has(name));
    if (unknown) throw problem(where, `${key} uses {${unknown}}, which the page does not fill in`);
  }
}

/**
 * The catalogs of the pages: the core's, each overridden and extended by the deployment's
 * directory (`locales.messages_dir`), where a file may also add a locale.
 */
export function loadCatalogs(messagesDir: string | undefined, builtinDir = BUILTIN_CATALOGS): Map<string, Catalog> {
  const catalogs = readDirectory(builtinDir, 'core/locales');
  if (!catalogs.has(BASE_LOCALE)) throw problem('core/locales', `${BASE_LOCALE}.json is missing`);
  if (!messagesDir) return catalogs;
  const known = placeholdersByKey(catalogs.values());
  for (const [locale, own] of readDirectory(path.resolve(messagesDir), 'locales.messages_dir')) {
    checkCatalog(own, known, `locales.messages_dir: ${locale}.json`);
    catalogs.set(locale, { ...catalogs.get(locale), ...own });
  }
  return catalogs;
}
