import type { AuthMethod, MethodCompletion } from '@gatehouse-auth/plugin-api';
import type { GatehouseConfig } from '../config/schema.js';

/** A knowledge factor only (a password): what someone who read it over a shoulder also has. */
export function isKnowledgeOnly(amr: readonly string[]): boolean {
  return amr.every((v) => v === 'pwd');
}

/** Whether any of these completions proved more than a password. */
export function provedBeyondPassword(completions: readonly Pick<MethodCompletion, 'amr'>[]): boolean {
  return completions.some((c) => c.amr.length > 0 && !isKnowledgeOnly(c.amr));
}

/**
 * Whether `method` completes a first stage by itself, so that whoever binds one can sign in with
 * it alone: a discoverable method (a passkey names its user), one that some app (or one of its acr
 * levels) lists in its first stage (but an app whose logins are pinned to a known user), or one
 * an app lets complete the whole login. A password is not
 * such a credential here: replacing it is the password's own rule.
 */
export function signsInAlone(method: AuthMethod, config: Pick<GatehouseConfig, 'apps'>): boolean {
  if (isKnowledgeOnly(method.amr)) return false;
  if (method.discoverable) return true;
  // A pinned app's logins are for a user known beforehand: its first stage is not a sign-in.
  return config.apps.some(
    (app) =>
      (!app.pinned_logins && app.login_stages[0]?.includes(method.id)) ||
      app.acr_values.some((level) => level.login_stages[0]?.includes(method.id)) ||
      app.single_factor_methods.includes(method.id),
  );
}

/**
 * Whether an authentication that proved `completions` may bind `method` (NIST SP 800-63B §6.1.2.1:
 * authenticate at the level the new authenticator will be used at). A password alone never binds
 * a credential that signs in by itself, and never adds a factor for a user who has one
 * (`hasSecondFactor`, asked only when it matters).
 */
export async function mayBind(
  method: AuthMethod,
  completions: readonly Pick<MethodCompletion, 'amr'>[],
  config: Pick<GatehouseConfig, 'apps'>,
  hasSecondFactor: () => Promise<boolean>,
): Promise<boolean> {
  if (provedBeyondPassword(completions)) return true;
  if (signsInAlone(method, config)) return false;
  return !(await hasSecondFactor());
}
