// The hosted login page's side of FIDO2: ask the browser for a passkey with the options the
// initiation answered, and verify its response. @simplewebauthn/browser comes from the package
// (served beside this file by the core), never from a CDN.
import './simplewebauthn-browser.js';

const { startAuthentication, startRegistration, browserSupportsWebAuthn, browserSupportsWebAuthnAutofill } =
  globalThis.SimpleWebAuthnBrowser;

/** What the user is told when the browser refuses or the user cancels. */
function refusal(err) {
  if (err && err.name === 'NotAllowedError')
    return 'The passkey was not used: it was cancelled, timed out, or could not confirm it is you. Try again, or choose another way.';
  return 'Your passkey could not be used here. Choose another way to sign in.';
}

window.GatehouseLogin.register('FIDO2', {
  async start(ctx) {
    if (!browserSupportsWebAuthn()) {
      throw { code: 'FIDO2_UNSUPPORTED', error: 'This browser cannot use passkeys. Choose another way to sign in.' };
    }
    ctx.say('Follow your browser to use your passkey…', false);
    const data = await ctx.initiate();
    let response;
    try {
      response = await startAuthentication({ optionsJSON: data.fido2_options });
    } catch (err) {
      throw { code: 'FIDO2_REFUSED', error: refusal(err) };
    }
    await ctx.verify({ fido2_client_response: JSON.stringify(response) });
  },

  // After a password login (the offer page): create a passkey on this device for next time.
  async enroll(ctx) {
    if (!browserSupportsWebAuthn()) throw { code: 'FIDO2_UNSUPPORTED', error: 'This browser cannot create passkeys.' };
    ctx.say('Follow your browser to create the passkey…', false);
    const data = await ctx.setup('initiation', { name: 'Passkey on this device' });
    let response;
    try {
      response = await startRegistration({ optionsJSON: data.fido2_options });
    } catch (err) {
      throw {
        code: 'FIDO2_REFUSED',
        error:
          err && err.name === 'InvalidStateError'
            ? 'This device already has a passkey for your account.'
            : 'No passkey was created. You can continue without one.',
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
