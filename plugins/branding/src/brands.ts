import type { Brand, Branding, PluginApi } from '@gatehouse-auth/core';
import type { NextFunction, Response } from 'express';
import { isLogoUrl, sixDigits, type BrandSettings, type LogoFile } from './settings.js';

type Router = ReturnType<PluginApi['services']['http']['createRouter']>;

/** Where the routes are mounted; the paths below are under it. */
export const BRANDING_PATH = '/branding';
/** Where the logo files are served: the global one, and a config app's. */
const LOGO_PATH = '/logo';
const appLogoPath = (clientId: string) => `/apps/${encodeURIComponent(clientId)}/logo`;
const COLOR_PATH = '/color/';

/**
 * The brands of the server (the plugin's options) and of its apps (their `branding` key), and
 * the routes of their files: the logos and a style sheet per color
 * (`/branding/color/1f5fbf.css`, made from the path, so a database app's color needs no lookup).
 * Nothing of it weakens the pages' CSP: the color comes in a style sheet of this server, a logo
 * file is served from here, and only a logo URL adds its own origin to img-src on its pages.
 */
export class ConfiguredBranding implements Branding {
  private readonly global: Brand;

  constructor(
    private readonly deps: {
      /** The global brand, parsed (its logo file read). */
      options: BrandSettings;
      /** A registered app's `branding` key as parsed (config and database apps). */
      app: (clientId: string) => BrandSettings | undefined;
      /** The issuer's path ('' at the root): the prefix of every URL a page uses. */
      issuerPath: string;
    },
  ) {
    this.global = this.brand(deps.options, LOGO_PATH, deps.options.logoFile);
  }

  /** The brand of an app's pages (its keys over the global ones), or the global brand. */
  of(clientId?: string | null): Brand {
    const own = clientId ? this.deps.app(clientId) : undefined;
    if (!own || !clientId) return this.global;
    const { logoFile: _global, ...shared } = this.deps.options;
    const merged = { ...shared, ...own };
    // A logo file is the app's only when the app names it (database apps cannot, see storedBrandSchema).
    return own.logo
      ? this.brand(merged, appLogoPath(clientId), own.logoFile)
      : this.brand(merged, LOGO_PATH, this.deps.options.logoFile);
  }

  /** The logo files and the color style sheets, for mounting at `BRANDING_PATH`. */
  routes(router: Router): Router {
    const sendLogo = (logo: LogoFile | undefined, res: Response, next: NextFunction) => {
      if (!logo) return next();
      res.set({
        'Content-Type': logo.contentType,
        'Cache-Control': 'public, max-age=86400',
        ETag: `"${logo.version}"`,
        'X-Content-Type-Options': 'nosniff',
        // An SVG opened on its own runs nothing and loads nothing.
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      });
      res.send(logo.body);
    };
    router.get(LOGO_PATH, (_req, res, next) => sendLogo(this.deps.options.logoFile, res, next));
    router.get('/apps/:clientId/logo', (req, res, next) =>
      sendLogo(this.deps.app(String(req.params.clientId))?.logoFile, res, next),
    );
    router.get(`${COLOR_PATH}:file`, (req, res, next) => {
      const hex = /^([0-9a-f]{6})\.css$/.exec(String(req.params.file))?.[1];
      if (!hex) return next();
      const [r, g, b] = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
      res.set({
        'Content-Type': 'text/css; charset=utf-8',
        // The path is the content: it never changes.
        'Cache-Control': 'public, max-age=31536000, immutable',
        'X-Content-Type-Options': 'nosniff',
      });
      res.send(`:root {\n  --accent: #${hex};\n  --accent-ring: rgba(${r}, ${g}, ${b}, 0.35);\n}\n`);
    });
    return router;
  }

  private brand(settings: BrandSettings, logoRoute: string, file: LogoFile | undefined): Brand {
    const base = `${this.deps.issuerPath}${BRANDING_PATH}`;
    const { logo } = settings;
    let src: string | null = null;
    let imageSource: string | null = null;
    if (logo && isLogoUrl(logo)) {
      src = logo;
      imageSource = new URL(logo).origin;
    } else if (logo) {
      src = file ? `${base}${logoRoute}?v=${file.version}` : null;
    }
    return {
      title: settings.title ?? null,
      logo: src,
      imageSource,
      stylesheet: settings.primary_color ? `${base}${COLOR_PATH}${sixDigits(settings.primary_color)}.css` : null,
      supportUrl: settings.support_url ?? null,
      docsUrl: settings.docs_url ?? null,
    };
  }
}
