/**
 * EMAIL: a one-time code sent to the user's email address (or another enrolled address).
 *
 * NIST SP 800-63B does not accept email as an authenticator (it is not a possession factor the
 * user alone controls), so it must not count as a second factor at AAL2: use this method for
 * account recovery or low-assurance logins only.
 */
import { codeMethodOptions, addCodeMethod, definePlugin, maskEmail, normalizeEmail } from '@gatehouse-auth/core';

export default definePlugin({
  name: '@gatehouse-auth/method-email',
  apiVersion: '^1',
  options: codeMethodOptions,
  register(api, options) {
    addCodeMethod(
      api,
      {
        id: 'EMAIL',
        kind: 'email',
        amr: ['otp'],
        page: { label: 'Email', codeLabel: 'Code from the email', send: 'Send code', sendAgain: 'Send a new code' },
        addressOf: (user) => user.email,
        normalizeAddress: normalizeEmail,
        mask: maskEmail,
        locales: ['en', 'de'],
        render: (code, minutes, locale) =>
          locale === 'de'
            ? {
                subject: 'Ihr Bestätigungscode',
                text: `Ihr Bestätigungscode ist ${code}. Er ist ${minutes} Minuten gültig.\n\nWenn Sie sich nicht anmelden wollten, ignorieren Sie diese Nachricht.`,
              }
            : {
                subject: 'Your verification code',
                text: `Your verification code is ${code}. It expires in ${minutes} minutes.\n\nIf you did not try to sign in, ignore this message.`,
              },
        renderLink: (url, minutes, locale) =>
          locale === 'de'
            ? {
                subject: 'Ihr Anmeldelink',
                text: `Öffnen Sie diesen Link, um sich anzumelden (er ist ${minutes} Minuten gültig):\n\n${url}\n\nWenn Sie sich nicht anmelden wollten, ignorieren Sie diese Nachricht und öffnen Sie den Link nicht.`,
              }
            : {
                subject: 'Your sign-in link',
                text: `Open this link to sign in (it expires in ${minutes} minutes):\n\n${url}\n\nIf you did not try to sign in, ignore this message and do not open the link.`,
              },
      },
      options,
    );
  },
});
