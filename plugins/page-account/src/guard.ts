import type { AuthMethod, JsonObject, PluginApi, UserAccounts } from '@gatehouse-auth/core';
import type { SiteRequest } from '@gatehouse-auth/site-kit';

/** A knowledge factor only (a password): what someone who read it over a shoulder also has. */
export function knowledgeOnly(amr: readonly string[]): boolean {
  return amr.every((v) => v === 'pwd');
}

/** The apps as `UserAccounts.overview` lists them: what the binding rule reads of them. */
export interface AppStages {
  loginStages: string[][];
  acrValues: { stages: string[][] }[];
  singleFactorMethods: string[];
}

/**
 * Whether `method` completes a first stage by itself (security checklist 12.3): a discoverable
 * method (a passkey names its user), one an app (or one of its acr levels) lists in its first
 * stage, or one an app lets complete the whole login. A password is never such a credential here.
 */
export function signsInAlone(method: Pick<AuthMethod, 'id' | 'amr' | 'discoverable'>, apps: AppStages[]): boolean {
  if (knowledgeOnly(method.amr)) return false;
  if (method.discoverable) return true;
  return apps.some(
    (app) =>
      app.loginStages[0]?.includes(method.id) ||
      app.acrValues.some((level) => level.stages[0]?.includes(method.id)) ||
      app.singleFactorMethods.includes(method.id),
  );
}

/** Why the page's sign-in may not do a sensitive action now. */
export type Refusal = 'stale' | 'password_only' | null;

/**
 * What a sensitive action of the account page needs (NIST SP 800-63B §6.1.2.1, checklist 12.3):
 * a sign-in to the page no older than `maxAge` seconds (else `stale`: the page asks for the
 * factors again, `web.login.start` with `maxAge`), and, to bind `method`, more than a password
 * when the method signs in alone or the user has a second factor already.
 */
export class ActionGuard {
  constructor(
    private readonly api: Pick<PluginApi, 'web' | 'services'>,
    private readonly maxAge: number,
  ) {}

  private accounts(): UserAccounts {
    return this.api.services.resolve<UserAccounts>('userAccounts');
  }

  /** Whether the page's sign-in is recent enough for a sensitive action. */
  recent(r: SiteRequest): boolean {
    return this.api.services.clock.now().getTime() / 1000 - r.session.authTime <= this.maxAge;
  }

  /** Whether the user has a way to sign in beyond a password set up. */
  async hasSecondFactor(r: SiteRequest): Promise<boolean> {
    const methods = await this.accounts().methods(r.session.user, r.req);
    return methods.some((m) => m.enrolled === true && !knowledgeOnly(this.methodOf(String(m.method))?.amr ?? ['pwd']));
  }

  /** A registered method, or null. */
  methodOf(id: string): AuthMethod | null {
    try {
      return this.api.web.loginFlows.method(id);
    } catch {
      return null;
    }
  }

  /** Whether this sign-in may bind `method` now. */
  async mayBind(r: SiteRequest, method: AuthMethod): Promise<Refusal> {
    if (!this.recent(r)) return 'stale';
    if (!knowledgeOnly(r.session.amr)) return null;
    const apps = (await this.accounts().overview()).apps as unknown as AppStages[];
    if (signsInAlone(method, apps)) return 'password_only';
    return (await this.hasSecondFactor(r)) ? 'password_only' : null;
  }

  /** Whether this sign-in may change the password, the addresses or delete the account. */
  async mayChange(r: SiteRequest): Promise<Refusal> {
    if (!this.recent(r)) return 'stale';
    // A user with a second factor proves it: a password alone does not change the account.
    if (knowledgeOnly(r.session.amr) && (await this.hasSecondFactor(r))) return 'password_only';
    return null;
  }
}

/** The string values of a setup answer the page shows (never a nested object). */
export function textOf(data: JsonObject, key: string): string | null {
  const value = data[key];
  return typeof value === 'string' ? value : null;
}
