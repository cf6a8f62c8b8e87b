/**
 * @gatehouse-auth/method-fido2 — FIDO2: passkeys and security keys (WebAuthn), with
 * @simplewebauthn/server. A passkey may also start a login without a username, where an app
 * lists FIDO2 in its first stage.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { fido2Method } from './method.js';
import { fido2Options } from './options.js';

export { fido2Method, PASSKEY, RESPONSE_FIELD } from './method.js';
export { fido2AppOptions, fido2Options, type Fido2AppOptions, type Fido2Options } from './options.js';

export default definePlugin({
  name: '@gatehouse-auth/method-fido2',
  apiVersion: '^1',
  options: fido2Options,
  register(api, options) {
    api.methods.add(fido2Method(options, api.services, api.records));
  },
});
