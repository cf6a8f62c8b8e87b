// The hosted login page's side of FIDO2: ask the browser for a passkey with the options the
// initiation answered, and verify its response. @simplewebauthn/browser comes from the package
// (served beside this file by the core), never from a CDN. What it says is English here and may
// be translated by the page's catalogs (`method.FIDO2.js.<name>`, see docs/locales.md).
import './simplewebauthn-browser.js';

const { startAuthentication, startRegistration, browserSupportsWebAuthn, browserSupportsWebAuthnAutofill } =
  globalThis.SimpleWebAuthnBrowser;

/** The English of every message, by name. */
const ENGLISH = {
  unsupported: 'This browser cannot use passkeys. Choose another way to sign in.',
  not_allowed:
    'The passkey was not used: it was cancelled, timed out, or could not confirm it is you. Try again, or choose another way.',
  refused: 'Your passkey could not be used here. Choose another way to sign in.',
  follow: 'Follow your browser to use your passkey…',
  cannot_create: 'This browser cannot create passkeys.',
  follow_create: 'Follow your browser to create the passkey…',
  credential_name: 'Passkey on this device',
  exists: 'This device already has a passkey for your account.',
  not_created: 'No passkey was created. You can continue without one.',
};

/** A message in the page's language (a page without `t` gets the English). */
function text(ctx, name) {
  return typeof ctx.t === 'function' ? ctx.t('method.FIDO2.js.' + name, ENGLISH[name]) : ENGLISH[name];
}

/** What the user is told when the browser refuses or the user cancels. */
function refusal(ctx, err) {
  return text(ctx, err && err.name === 'NotAllowedError' ? 'not_allowed' : 'refused');
}

window.GatehouseLogin.register('FIDO2', {
  async start(ctx) {
    if (!browserSupportsWebAuthn()) {
      throw { code: 'FIDO2_UNSUPPORTED', error: text(ctx, 'unsupported') };
    }
    ctx.say(text(ctx, 'follow'), false);
    const data = await ctx.initiate();
    let response;
    try {
      response = await startAuthentication({ optionsJSON: data.fido2_options });
    } catch (err) {
      throw { code: 'FIDO2_REFUSED', error: refusal(ctx, err) };
    }
    await ctx.verify({ fido2_client_response: JSON.stringify(response) });
  },

  // After a password login (the offer page): create a passkey on this device for next time.
  async enroll(ctx) {
    if (!browserSupportsWebAuthn()) throw { code: 'FIDO2_UNSUPPORTED', error: text(ctx, 'cannot_create') };
    ctx.say(text(ctx, 'follow_create'), false);
    const data = await ctx.setup('initiation', { name: text(ctx, 'credential_name') });
    let response;
    try {
      response = await startRegistration({ optionsJSON: data.fido2_options });
    } catch (err) {
      throw {
        code: 'FIDO2_REFUSED',
        error: text(ctx, err && err.name === 'InvalidStateError' ? 'exists' : 'not_created'),
      };
    }
    await ctx.setup('verification', { fido2_client_response: JSON.stringify(response) });
  },

  // Conditional mediation: the browser lists the site's passkeys in the username field's
  // autofill; picking one signs in without pressing Continue. Choosing FIDO2 and Continue
  // starts a modal request, which replaces this one.
  async autofill(ctx) {
    if (!(await browserSupportsWebAuthnAutofill())) return;
    const data = await ctx.initiate();
    const response = await startAuthentication({ optionsJSON: data.fido2_options, useBrowserAutofill: true });
    await ctx.verify({ fido2_client_response: JSON.stringify(response) });
  },
});
