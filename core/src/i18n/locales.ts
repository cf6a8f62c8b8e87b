import { Messages, negotiate } from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import { BASE_LOCALE, loadCatalogs, type Catalog } from './catalogs.js';

/**
 * The languages of the hosted pages. Each locale reads through to its language, then English
 * (`de-AT` → `de` → `en`), so a catalog may translate only some messages.
 */
export class Locales {
  /** The locales a page can be shown in, English first: `ui_locales_supported`. */
  readonly supported: string[];
  private readonly byLocale = new Map<string, Messages>();

  constructor(catalogs: ReadonlyMap<string, Catalog>) {
    this.supported = [BASE_LOCALE, ...[...catalogs.keys()].filter((l) => l !== BASE_LOCALE).sort()];
    for (const locale of this.supported) {
      const chain = locale.split('-').map((_, i, parts) => parts.slice(0, i + 1).join('-'));
      const layers = [BASE_LOCALE, ...chain].map((l) => catalogs.get(l) ?? {});
      this.byLocale.set(locale, new Messages(locale, new Map(Object.entries(Object.assign({}, ...layers)))));
    }
  }

  /** The core's catalogs with the deployment's directory of `<locale>.json` files over them. */
  static load(messagesDir: string | undefined): Locales {
    return new Locales(loadCatalogs(messagesDir));
  }

  /** The messages of a supported locale (English for any other). */
  messages(locale: string): Messages {
    return this.byLocale.get(locale) ?? this.byLocale.get(BASE_LOCALE)!;
  }

  /** The messages of a page: by the request's `ui_locales`, then the browser's Accept-Language. */
  for(req: IncomingMessage, uiLocales?: string | null): Messages {
    const header = req.headers['accept-language'];
    return this.messages(negotiate(this.supported, uiLocales, header, BASE_LOCALE));
  }
}

/** A page URL's own `ui_locales` (an error page of /authorize or of the logout endpoint). */
export function queryUiLocales(req: IncomingMessage): string | null {
  const query = (req as IncomingMessage & { query?: Record<string, unknown> }).query;
  const value = query?.ui_locales;
  return typeof value === 'string' ? value : null;
}
