/**
 * @gatehouse-auth/branding — the hosted pages' brand (issue 29, decisions 54 and 65): a product
 * name, a logo (a file served here, or an https URL), a primary color held to WCAG AA against
 * white text, and support and docs links, globally (this plugin's options) and per app (the
 * apps' `branding` key, each key over the global one). It provides the core's `branding`
 * service; without it the pages show no brand.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { BRANDING_PATH, ConfiguredBranding } from './brands.js';
import {
  brandingOptions,
  configBrandSchema,
  storedBrandSchema,
  type BrandingOptions,
  type BrandSettings,
} from './settings.js';

export { ConfiguredBranding } from './brands.js';
export {
  brandingOptions,
  brandingSchema,
  contrastWithWhite,
  MAX_LOGO_BYTES,
  MIN_CONTRAST,
  type BrandingConfig,
  type BrandingOptions,
} from './settings.js';

export default definePlugin<BrandingOptions>({
  name: '@gatehouse-auth/branding',
  apiVersion: '^1.3',
  provides: ['branding'],
  options: brandingOptions,
  // An app's own brand: a logo file in the config file only, an https URL in the database.
  appConfig: { branding: configBrandSchema.optional() },
  storedAppConfig: { branding: storedBrandSchema.optional() },
  register(api, options) {
    const branding = new ConfiguredBranding({
      options,
      // Read at each page: apps stored in the database come and go at run time (decision 51).
      app: (clientId) => api.web.client(clientId)?.settings.branding as BrandSettings | undefined,
      issuerPath: api.web.base,
    });
    api.provide('branding', branding);
    api.routes.add({ path: BRANDING_PATH, router: branding.routes(api.services.http.createRouter()) });
  },
});
