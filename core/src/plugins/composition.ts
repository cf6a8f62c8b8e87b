import type { Logger } from 'pino';
import { DEFAULT_GRANT_TYPES, type GatehouseConfig } from '../config/schema.js';
import { BootError } from '../errors.js';
import type { Extensions } from './loader.js';

/** The path a plugin mounts its routes at to be the hosted login page (`@gatehouse-auth/page-login`). */
export const HOSTED_LOGIN_PATH = '/login';

const known = (ids: string[]) => (ids.length ? ids.join(', ') : 'none');

/**
 * What the config asks of the registered extensions, checked once every plugin registered: a
 * login stage naming no method, a grant type no plugin handles, or an FDS rule that would never
 * run stops start-up (and `config check`) with one line naming the key.
 */
export function checkComposition(config: GatehouseConfig, extensions: Extensions, logger: Logger): void {
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
  config.apps.forEach((app, i) => {
    checkStages(app.login_stages, `apps[${i}].login_stages`);
    app.acr_values.forEach((level, l) => checkStages(level.login_stages, `apps[${i}].acr_values[${l}].login_stages`));
  });

  config.apps.forEach((app, i) =>
    app.single_factor_methods.forEach((id, j) => {
      const method = extensions.methods.get(id);
      if (!method?.singleFactor || !app.login_stages.some((stage) => stage.includes(id))) {
        throw new BootError(
          'CONFIG_INVALID',
          `apps[${i}].single_factor_methods[${j}]: "${id}" must be a method of the app's login_stages that allows single-factor use`,
        );
      }
    }),
  );

  // A login UI on another site needs a cross-site flow cookie: SameSite=None, which browsers keep
  // only when Secure, which they accept over https (or from localhost, in development).
  const issuer = new URL(config.issuer);
  config.apps.forEach((app, i) => {
    if (app.login_page_url && issuer.protocol !== 'https:' && issuer.hostname !== 'localhost') {
      throw new BootError(
        'CONFIG_INVALID',
        `apps[${i}].login_page_url: needs an https issuer (or http://localhost for development)`,
      );
    }
  });

  // /authorize sends the browser to the hosted page, which is a plugin's (decision 43).
  if (!extensions.routes.values().some((route) => route.path === HOSTED_LOGIN_PATH)) {
    config.apps.forEach((app, i) => {
      if (!app.login_page_url && app.login_stages.length) {
        throw new BootError(
          'CONFIG_INVALID',
          `apps[${i}] (${app.client_id}): no plugin serves the hosted login page (${HOSTED_LOGIN_PATH}) and the app has no login_page_url; add @gatehouse-auth/page-login to plugins, or give the app a login_page_url`,
        );
      }
    });
  }

  const grants = extensions.grants.ids();
  config.apps.forEach((app, i) => {
    // Grant types the operator wrote must have a plugin; the default only gets a warning, as an
    // app may well use the verification API alone.
    app.grant_types?.forEach((grant, j) => {
      if (!extensions.grants.has(grant)) {
        throw new BootError(
          'CONFIG_INVALID',
          `apps[${i}].grant_types[${j}]: no grant "${grant}" is registered (known: ${known(grants)})`,
        );
      }
    });
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
