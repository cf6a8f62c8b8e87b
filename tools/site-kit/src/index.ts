/**
 * @gatehouse-auth/site-kit: the frame the console and the account page share (decision 39):
 * a sign-in through a hosted login resting on the browser session, the layout, the style
 * sheet, CSRF-checked forms, and the messages of the frame.
 */
import { readFileSync } from 'node:fs';
import type { PluginCatalogs } from '@gatehouse-auth/core';

export * from './layout.js';
export * from './signin.js';
export * from './site.js';

/** The frame's catalogs (`site.*`, the shared columns) under a site's own: pass to `api.messages`. */
export function siteCatalogs(own: URL): PluginCatalogs {
  const read = (dir: URL, locale: string) =>
    JSON.parse(readFileSync(new URL(`${locale}.json`, dir), 'utf8')) as Record<string, string>;
  const kit = new URL('../locales/', import.meta.url);
  return Object.fromEntries(['en', 'de'].map((l) => [l, { ...read(kit, l), ...read(own, l) }]));
}
