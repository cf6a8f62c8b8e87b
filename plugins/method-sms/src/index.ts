/**
 * SMS: a one-time code sent by text message to the user's phone (or another enrolled phone).
 * NIST 800-63B treats SMS as a restricted authenticator: offer an alternative where possible.
 */
import { codeMethodOptions, addCodeMethod, definePlugin, maskPhone, normalizePhone } from '@gatehouse-auth/core';

export default definePlugin({
  name: '@gatehouse-auth/method-sms',
  apiVersion: '^1',
  options: codeMethodOptions,
  register(api, options) {
    addCodeMethod(
      api,
      {
        id: 'SMS',
        kind: 'sms',
        amr: ['sms'],
        page: {
          label: 'Text message',
          codeLabel: 'Code from the text message',
          send: 'Send code',
          sendAgain: 'Send a new code',
        },
        addressOf: (user) => user.phone,
        normalizeAddress: normalizePhone,
        mask: maskPhone,
        locales: ['en', 'de'],
        render: (code, minutes, locale) => ({
          text:
            locale === 'de'
              ? `Ihr Bestätigungscode ist ${code}. Er ist ${minutes} Minuten gültig.`
              : `Your verification code is ${code}. It expires in ${minutes} minutes.`,
        }),
      },
      options,
    );
  },
});
