import { PLUGGABLE_AUTH_METHODS } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import { DEFAULT_GRANT_TYPES, type AppConfig, type GatehouseConfig } from '../config/schema.js';
import { BootError } from '../errors.js';
import { CONSENT_PATH } from '../oauth/authorize/context.js';
import type { Extensions } from './loader.js';

/** The path a plugin mounts its routes at to be the hosted login page (`@gatehouse-auth/page-login`). */
export const HOSTED_LOGIN_PATH = '/login';

/**
 * Where the hosted login page's sign-out form posts: offered only while a plugin names it as
 * discovery's `end_session_endpoint` (`@gatehouse-auth/oauth-end-session`).
 */
export const END_SESSION_PATH = '/session/end_session';

const known = (ids: string[]) => (ids.length ? ids.join(', ') : 'none');

/**
 * What the config asks of the registered extensions, checked once every plugin registered: a
 * login stage naming no method, a grant type no plugin handles, or an FDS rule that would never
 * run stops start-up (and `config check`) with one line naming the key.
 */
export function checkComposition(config: GatehouseConfig, extensions: Extensions, logger: Logger): void {
  const check = appComposition(config, extensions);
  config.apps.forEach((app, i) => check(app, `apps[${i}]`));
  config.apps.forEach((app, i) => {
    // The default grant type only gets a warning, as an app may well use the verification API alone.
    const unhandled = app.grant_types ? [] : DEFAULT_GRANT_TYPES.filter((g) => !extensions.grants.has(g));
    if (unhandled.length) {
      logger.warn(
        { app: app.client_id, grant_types: unhandled },
        `apps[${i}] names no grant_types, and no plugin handles the default ${unhandled.join(', ')}: its token requests will fail`,
      );
    }
  });

  const rules = extensions.fdsRules.ids();
  const listed = config.verification.fds_rules;
  if (!listed) {
    if (rules.length)
      logger.info({ fds_rules: rules }, 'FDS rules run in plugin order (verification.fds_rules is not set)');
    return;
  }
  listed.forEach((id, i) => {
    if (!extensions.fdsRules.has(id)) {
      throw new BootError(
        'CONFIG_INVALID',
        `verification.fds_rules[${i}]: no FDS rule "${id}" is registered (known: ${known(rules)})`,
      );
    }
  });
  // A fraud rule that loads and never runs is a hole nobody sees.
  const unlisted = rules.find((id) => !listed.includes(id));
  if (unlisted) {
    throw new BootError(
      'CONFIG_INVALID',
      `verification.fds_rules: FDS rule "${unlisted}" (plugin ${extensions.fdsRules.ownerOf(unlisted)}) is registered but not listed, so it would never run; add it to the list or remove the plugin`,
    );
  }
}

/**
 * What one app asks of the registered extensions (its login stages' and acr values' methods,
 * single-factor methods, a login UI elsewhere, the hosted page, its grant types): a BootError
 * naming the key (`label` names the app, `apps[2]`). Config apps are checked at start-up, apps
 * stored in the database when they are written and loaded.
 */
export function appComposition(
  config: GatehouseConfig,
  extensions: Extensions,
): (app: AppConfig, label: string) => void {
  const issuer = new URL(config.issuer);
  return (app, label) => {
    const methods = extensions.methods.ids();
    const checkStages = (stages: string[][], path: string) =>
      stages.forEach((stage, j) =>
        stage.forEach((method, k) => {
          if (!extensions.methods.has(method)) {
            throw new BootError(
              'CONFIG_INVALID',
              `${path}[${j}][${k}]: no method "${method}" is registered (known: ${known(methods)})`,
            );
          }
        }),
      );
    checkStages(app.login_stages, `${label}.login_stages`);
    app.acr_values.forEach((level, l) => checkStages(level.login_stages, `${label}.acr_values[${l}].login_stages`));
    app.single_factor_methods.forEach((id, j) => {
      const method = extensions.methods.get(id);
      if (!method?.singleFactor || !app.login_stages.some((stage) => stage.includes(id))) {
        throw new BootError(
          'CONFIG_INVALID',
          `${label}.single_factor_methods[${j}]: "${id}" must be a method of the app's login_stages that allows single-factor use`,
        );
      }
    });
    // A login UI on another site needs a cross-site flow cookie: SameSite=None, which browsers keep
    // only when Secure, which they accept over https (or from localhost, in development).
    if (app.login_page_url && issuer.protocol !== 'https:' && issuer.hostname !== 'localhost') {
      throw new BootError(
        'CONFIG_INVALID',
        `${label}.login_page_url: needs an https issuer (or http://localhost for development)`,
      );
    }
    // /authorize sends the browser to the hosted page, which is a plugin's (decision 43).
    if (
      !app.login_page_url &&
      app.login_stages.length &&
      !extensions.routes.values().some((route) => route.path === HOSTED_LOGIN_PATH)
    ) {
      throw new BootError(
        'CONFIG_INVALID',
        `${label} (${app.client_id}): no plugin serves the hosted login page (${HOSTED_LOGIN_PATH}) and the app has no login_page_url; add @gatehouse-auth/page-login to plugins, or give the app a login_page_url`,
      );
    }
    // Every first sign-in of such an app asks for consent: without the page none would succeed.
    if (app.consent_required && !extensions.routes.has(CONSENT_PATH)) {
      throw new BootError(
        'CONFIG_INVALID',
        `${label}.consent_required: no plugin serves the consent page (${CONSENT_PATH}); add @gatehouse-auth/page-consent to plugins, or set it to false`,
      );
    }
    // A client authentication method the core leaves to plugins (RFC 8705's) must have one.
    const method = app.token_endpoint_auth_method;
    if (
      (PLUGGABLE_AUTH_METHODS as readonly string[]).includes(method ?? '') &&
      !extensions.clientAuthentications.has(method!)
    ) {
      throw new BootError(
        'CONFIG_INVALID',
        `${label}.token_endpoint_auth_method: no plugin provides ${method} (add @gatehouse-auth/oauth-mtls to plugins)`,
      );
    }
    // Grant types the operator wrote must have a plugin.
    const grants = extensions.grants.ids();
    app.grant_types?.forEach((grant, j) => {
      if (!extensions.grants.has(grant)) {
        throw new BootError(
          'CONFIG_INVALID',
          `${label}.grant_types[${j}]: no grant "${grant}" is registered (known: ${known(grants)})`,
        );
      }
    });
  };
}
