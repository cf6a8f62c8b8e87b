/**
 * @gatehouse-auth/plugin-api — the plugin contract: what a plugin compiles against. The core
 * implements it and re-exports all of it from `@gatehouse-auth/core`, which is where plugins
 * import it from. Nothing here imports the core (`.ci/check-core-imports.mjs`).
 */
export * from './values.js';
export * from './client.js';
export * from './oauth.js';
export * from './errors.js';
export * from './oauth-errors.js';
export * from './verification-errors.js';
export type * from './extensions.js';
export type * from './services.js';
export type * from './client-admin.js';
export type * from './client-policy.js';
export * from './accounts.js';
export * from './routes.js';
export * from './api-spec.js';
export * from './verification-routes.js';
export * from './envelope.js';
export * from './pages.js';
export * from './method-modules.js';
export type * from './security-events.js';
export * from './api.js';
export type * from './cli.js';
export * from './html.js';
export * from './messages.js';
export * from './login.js';
export type * from './web.js';
export * from './negotiate.js';
export * from './scrub.js';
export * from './code-method.js';
export * from './device-method.js';
export * from './checks.js';
// The page kit (decision 85): the hosted pages' layout, style sheet and scripts, and headers.
export * from './page-assets.js';
export * from './page-headers.js';
export * from './page-layout.js';
