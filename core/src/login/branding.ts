import type { Brand } from '@gatehouse-auth/plugin-api';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { z } from 'zod';

// Branding (issue 29, decision 54): a product name, a logo, a primary color, a support and a docs
// link, globally and per app. Nothing of it weakens the pages' CSP: the color comes in a style
// sheet of this server, a logo file is served from here, and only a logo URL adds its own origin
// to img-src on the pages that show it.

const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
const LOGO_TYPES: Record<string, string> = {
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
};
/** A logo is a small picture: a bigger file is a mistake (and memory kept for nothing). */
export const MAX_LOGO_BYTES = 512 * 1024;
/** WCAG 2.x AA for normal text: the primary color carries white button text. */
export const MIN_CONTRAST = 4.5;

/** The hex digits of a #rgb or #rrggbb color, as six lower-case digits. */
function sixDigits(color: string): string {
  const hex = color.slice(1).toLowerCase();
  return hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
}

/** The contrast ratio of a color against white (WCAG 2.x relative luminance), 1 to 21. */
export function contrastWithWhite(color: string): number {
  const hex = sixDigits(color);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (luminance + 0.05);
}

/** Whether a logo setting is a URL (else it names a file). */
export function isLogoUrl(logo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(logo) && URL.canParse(logo);
}

const httpsUrl = () =>
  z.string().refine((v) => URL.canParse(v) && new URL(v).protocol === 'https:', 'must be an https URL');

/** `branding:` globally and in an app (where every key overrides the global one). */
export const brandingSchema = z.strictObject({
  /** The product name: in the page title and next to the logo, instead of none ("Gatehouse" on the landing page). */
  title: z.string().trim().min(1).max(60).optional(),
  /** An https URL, or a file (.svg, .png, .jpg, .webp, .gif) that Gatehouse serves itself (config only). */
  logo: z
    .string()
    .min(1)
    .superRefine((logo, ctx) => {
      if (isLogoUrl(logo)) {
        if (new URL(logo).protocol !== 'https:')
          ctx.addIssue({ code: 'custom', message: 'must be an https URL or a file path' });
      } else if (!LOGO_TYPES[path.extname(logo).toLowerCase()]) {
        ctx.addIssue({
          code: 'custom',
          message: `a logo file must end in ${Object.keys(LOGO_TYPES).join(', ')} (its content type)`,
        });
      }
    })
    .optional(),
  /** Buttons, links and focus rings: #rgb or #rrggbb, dark enough for white text (WCAG AA, 4.5:1). */
  primary_color: z
    .string()
    .superRefine((color, ctx) => {
      if (!HEX_COLOR.test(color)) {
        ctx.addIssue({ code: 'custom', message: 'must be a color as #rgb or #rrggbb' });
        return;
      }
      const ratio = contrastWithWhite(color);
      if (ratio < MIN_CONTRAST)
        ctx.addIssue({
          code: 'custom',
          message: `${color} has a contrast of ${ratio.toFixed(2)}:1 with the white text of buttons; WCAG AA asks for ${MIN_CONTRAST}:1, choose a darker color`,
        });
    })
    .optional(),
  /** Where people get help: a link in every page's footer and on error pages. */
  support_url: httpsUrl().optional(),
  /** The documentation the landing page links to (default: the discovery document). */
  docs_url: httpsUrl().optional(),
});

export type BrandingConfig = z.output<typeof brandingSchema>;

/** A logo file's problem (missing, too big), or null: checked for the config's logos only. */
export function logoFileProblem(logo: string): string | null {
  if (!LOGO_TYPES[path.extname(logo).toLowerCase()]) return null; // the schema says why
  try {
    const stat = statSync(path.resolve(logo));
    if (!stat.isFile()) return `${logo} is not a file`;
    if (stat.size > MAX_LOGO_BYTES) return `${logo} has ${stat.size} bytes; a logo may have at most ${MAX_LOGO_BYTES}`;
    return null;
  } catch {
    return `cannot read ${logo} (a path is relative to the working directory)`;
  }
}

interface LogoFile {
  body: Buffer;
  contentType: string;
  version: string;
}

/** Where the logo files are served: the global one, and a config app's. */
const LOGO_PATH = '/branding/logo';
const appLogoPath = (clientId: string) => `/branding/apps/${encodeURIComponent(clientId)}/logo`;
const COLOR_PATH = '/branding/color/';

/**
 * The brands of the server and of its apps, and the routes of their files: the logos and a
 * style sheet per color (`/branding/color/1f5fbf.css`, made from the path, so a database app's
 * color needs no lookup).
 */
export class Branding {
  private readonly logos = new Map<string, LogoFile>();
  private readonly global: Brand;

  constructor(
    private readonly deps: {
      config: { branding?: BrandingConfig | undefined; apps: { client_id: string; branding?: BrandingConfig }[] };
      /** A registered app's parsed settings (config and database apps). */
      app: (clientId: string) => { branding?: BrandingConfig } | undefined;
      issuerPath: string;
    },
  ) {
    const { config } = deps;
    if (config.branding?.logo && !isLogoUrl(config.branding.logo)) this.load(LOGO_PATH, config.branding.logo);
    for (const app of config.apps) {
      const logo = app.branding?.logo;
      if (logo && !isLogoUrl(logo)) this.load(appLogoPath(app.client_id), logo);
    }
    this.global = this.brand(config.branding ?? {}, LOGO_PATH);
  }

  /** The brand of an app's pages (its keys over the global ones), or the global brand. */
  of(clientId?: string | null): Brand {
    const own = clientId ? this.deps.app(clientId)?.branding : undefined;
    if (!own || !clientId) return this.global;
    const merged = { ...(this.deps.config.branding ?? {}), ...own };
    // A logo file is the app's only when the app names it (database apps cannot, see appChecker).
    return this.brand(merged, own.logo ? appLogoPath(clientId) : LOGO_PATH);
  }

  routes(): Router {
    const router = express.Router();
    const sendLogo = (route: string, res: express.Response, next: express.NextFunction) => {
      const logo = this.logos.get(route);
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
    router.get(LOGO_PATH, (_req, res, next) => sendLogo(LOGO_PATH, res, next));
    router.get('/branding/apps/:clientId/logo', (req, res, next) =>
      sendLogo(appLogoPath(String(req.params.clientId)), res, next),
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

  private load(route: string, file: string): void {
    // Config files were checked (checkLogoFiles); a plugin's app (`api.app`) was not: no logo then.
    const contentType = LOGO_TYPES[path.extname(file).toLowerCase()];
    if (!contentType || logoFileProblem(file)) return;
    const body = readFileSync(path.resolve(file));
    this.logos.set(route, { body, contentType, version: createHash('sha256').update(body).digest('hex').slice(0, 16) });
  }

  private brand(settings: BrandingConfig, logoRoute: string): Brand {
    const base = this.deps.issuerPath;
    const { logo } = settings;
    let src: string | null = null;
    let imageSource: string | null = null;
    if (logo && isLogoUrl(logo)) {
      src = logo;
      imageSource = new URL(logo).origin;
    } else if (logo) {
      const file = this.logos.get(logoRoute);
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
