/**
 * IVR: a one-time code read out in a voice call to the user's phone (or another enrolled phone).
 * NIST 800-63B treats the phone as a restricted authenticator: offer an alternative where possible.
 */
import { codeMethodOptions, addCodeMethod, definePlugin, maskPhone, normalizePhone } from '@gatehouse-auth/core';

/** `123456` → `1, 2, 3, 4, 5, 6`: a speech engine reads digits one by one, with pauses. */
export function spellDigits(code: string): string {
  return [...code].join(', ');
}

export default definePlugin({
  name: '@gatehouse-auth/method-ivr',
  apiVersion: '^1',
  options: codeMethodOptions,
  register(api, options) {
    addCodeMethod(
      api,
      {
        id: 'IVR',
        kind: 'voice',
        amr: ['tel'],
        page: { label: 'Phone call', codeLabel: 'Code from the phone call', send: 'Call me', sendAgain: 'Call again' },
        addressOf: (user) => user.phone,
        normalizeAddress: normalizePhone,
        mask: maskPhone,
        // Said twice: a listener who missed a digit the first time need not call again.
        locales: ['en', 'de'],
        render: (code, _minutes, locale) => ({
          text:
            locale === 'de'
              ? `Ihr Code ist ${spellDigits(code)}. Noch einmal: ${spellDigits(code)}.`
              : `Your code is ${spellDigits(code)}. Again: ${spellDigits(code)}.`,
        }),
        formatCode: spellDigits,
      },
      options,
    );
  },
});
