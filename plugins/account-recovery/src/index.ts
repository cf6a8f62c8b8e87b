import type { IncomingMessage } from 'node:http';
import { definePlugin, type LoginFlowView } from '@gatehouse-auth/core';
import { LOST_FACTOR_CLIENT_ID, LOST_FACTOR_STAGES, lostFactorPages } from './lost-factor.js';
import { MESSAGES } from './messages.js';
import { recoveryOptions } from './options.js';
import { messagesFor, recoveryPages, RECOVERY_CLIENT_ID, RECOVERY_PATH } from './pages.js';
import { PasswordRecovery, recoveryError, type Medium } from './recovery.js';

export { RECOVERY_CLIENT_ID, RECOVERY_PATH } from './pages.js';
export { LOST_FACTOR_CLIENT_ID } from './lost-factor.js';
export { recoveryOptions, type RecoveryOptions } from './options.js';

/**
 * The `passwordRecovery` service this plugin provides (`services.resolve('passwordRecovery')`):
 * the hosted login page's "Forgot password?" link and the steps the cidaas reset-password calls
 * run. Every step refuses with an ApiError (status and code).
 */
export interface PasswordRecoveryService {
  /**
   * The link the hosted login page shows with a method of the flow's stage: "Forgot password?"
   * with the password, "Lost it? Use a backup code" with a second factor (`lost_factor`); else null.
   */
  loginLink(req: IncomingMessage, flow: LoginFlowView): { method: string; href: string; text: string } | null;
  /** Starts a reset: the same answer for every identifier; a code goes out only for an active user. */
  initiate(
    req: IncomingMessage,
    input: { identifier: string; medium?: Medium | null },
  ): Promise<{ resetRequestId: string }>;
  /**
   * The code of a reset (spent once): the exchange id the new password needs. A user with a
   * second factor is refused (403 SECOND_FACTOR_REQUIRED): they reset on the hosted page, where
   * they prove it.
   */
  validateCode(
    req: IncomingMessage,
    input: { resetRequestId: unknown; code: unknown },
  ): Promise<{ exchangeId: string }>;
  /** The new password for an exchange of that reset (once): every session ends, the user is told. */
  acceptReset(
    req: IncomingMessage,
    input: { resetRequestId: unknown; exchangeId: unknown; password: unknown; confirmPassword: unknown },
  ): Promise<{ sub: string }>;
}

/**
 * @gatehouse-auth/account-recovery: "Forgot password?" (OWASP Forgot Password Cheat Sheet,
 * NIST SP 800-63B §6.1.2.3). The hosted login page links to /recovery beside the password; the
 * user gives an identifier, gets the same answer whatever it names, proves a single-use code
 * sent by email or SMS, proves their second factor when they have one (a login of the app
 * `gatehouse-recovery` pinned to them), and chooses a new password under the PASSWORD method's
 * policy. Every session ends, the user is told, and nobody is signed in by the reset. With
 * `lost_factor`, a user who proves their password and a backup code removes a lost second factor
 * (/recovery/factor), with a notice of its own.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/account-recovery'
 *     options:
 *       email_channel: smtp
 *       second_factors: [TOTP, BACKUPCODE]
 */
export default definePlugin({
  name: '@gatehouse-auth/account-recovery',
  apiVersion: '^1.3',
  // userAccounts is that plugin's (decision 0063).
  dependencies: ['@gatehouse-auth/management'],
  options: recoveryOptions,
  provides: ['passwordRecovery'],
  register(api, options) {
    // Pinned: its one stage (second factors) is never a first stage anyone signs in with.
    api.app({
      client_id: RECOVERY_CLIENT_ID,
      name: 'Password reset',
      login_stages: [options.second_factors],
      pinned_logins: true,
    });
    api.messages(MESSAGES);
    const recovery = new PasswordRecovery(api, options);
    const router = api.services.http.createRouter();
    const pages = recoveryPages(api, recovery, options, router);
    let lost: ReturnType<typeof lostFactorPages> | null = null;
    if (options.lost_factor) {
      api.app({ client_id: LOST_FACTOR_CLIENT_ID, name: 'Lost second factor', login_stages: LOST_FACTOR_STAGES });
      lost = lostFactorPages(api, recovery, options, router);
    }
    api.routes.add({ path: RECOVERY_PATH, router });

    const service: PasswordRecoveryService = {
      loginLink: (req, flow) => pages.loginLink(req, flow) ?? lost?.loginLink(req, flow) ?? null,
      async initiate(req, input) {
        const ticket = await recovery.initiate(input.identifier, {
          medium: input.medium ?? null,
          messages: messagesFor(api, req),
          req,
        });
        return { resetRequestId: ticket };
      },
      async validateCode(req, input) {
        const exchange = await recovery.validate(input.resetRequestId, input.code, req);
        if (exchange.secondFactor === 'needed') {
          throw recoveryError(
            403,
            'SECOND_FACTOR_REQUIRED',
            `this account has a second factor: reset the password on ${api.web.url(RECOVERY_PATH)}, which asks for it`,
          );
        }
        return { exchangeId: exchange.id };
      },
      async acceptReset(req, input) {
        const user = await recovery.accept(input.exchangeId, {
          ticket: input.resetRequestId,
          password: input.password,
          confirm: input.confirmPassword,
          req,
          messages: messagesFor(api, req),
        });
        return { sub: user.id };
      },
    };
    api.provide('passwordRecovery', service);

    api.check(() => {
      for (const option of ['email_channel', 'sms_channel'] as const) {
        const id = options[option];
        if (id && !api.services.channels.get(id)) {
          throw new Error(`options.${option}: no delivery channel "${id}" is registered`);
        }
      }
    });
  },
});
