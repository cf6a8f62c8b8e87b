import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from '@gatehouse-auth/core';

// What a brand may say (issue 29, decision 54), as the plugin's options (the global brand) and
// as an app's `branding` key: a product name, a logo, a primary color and two links.

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
export function sixDigits(color: string): string {
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

/** The keys of a brand, globally (the options) and in an app (where every key overrides the global one). */
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

/** A logo file, read at start-up (when the config is parsed) and served from memory. */
export interface LogoFile {
  body: Buffer;
  contentType: string;
  version: string;
}

/** A brand's keys as parsed, with its logo file read when `logo` names one. */
export type BrandSettings = BrandingConfig & { logoFile?: LogoFile };

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

function readLogo(file: string): LogoFile {
  const body = readFileSync(path.resolve(file));
  return {
    body,
    contentType: LOGO_TYPES[path.extname(file).toLowerCase()]!,
    version: createHash('sha256').update(body).digest('hex').slice(0, 16),
  };
}

/** A brand from the config file: a logo file must be there and small, and is read now. */
export const configBrandSchema = brandingSchema
  .superRefine(({ logo }, ctx) => {
    const problem = logo && !isLogoUrl(logo) ? logoFileProblem(logo) : null;
    if (problem) ctx.addIssue({ code: 'custom', path: ['logo'], message: problem });
  })
  .transform((settings): BrandSettings =>
    settings.logo && !isLogoUrl(settings.logo) ? { ...settings, logoFile: readLogo(settings.logo) } : settings,
  );

/**
 * An app stored in the database: the admin API writes it from a bearer-token caller, and a file
 * path there would let that caller have any readable file of the server (a key file, a config)
 * served as a "logo". Such an app takes a logo URL only.
 */
export const storedBrandSchema = brandingSchema.superRefine(({ logo }, ctx) => {
  if (logo && !isLogoUrl(logo))
    ctx.addIssue({
      code: 'custom',
      path: ['logo'],
      message: 'an app stored in the database takes an https URL, not a file',
    });
});

/** The plugin's options: the global brand (every key optional; none, and the pages look unbranded). */
export const brandingOptions = configBrandSchema.prefault({});
export type BrandingOptions = z.output<typeof brandingOptions>;
