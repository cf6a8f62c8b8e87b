/**
 * TOUCHID: the device proves a biometric unlock by signing with its key bound to the unlock
 * (Secure Enclave, Android Keystore). The core checks the signature, that the key was bound to
 * a biometric when the device was, and that the proof claims the unlock (`uv`).
 */
import { addDeviceMethod, definePlugin, deviceMethodOptions } from '@gatehouse-auth/core';

export default definePlugin({
  name: '@gatehouse-auth/method-touchid',
  apiVersion: '^1',
  // The device API's routes: binding the device, its inbox and push steps (decision 69).
  dependencies: ['@gatehouse-auth/devices-api'],
  options: deviceMethodOptions,
  register(api, options) {
    addDeviceMethod(
      api,
      {
        id: 'TOUCHID',
        // A software key unlocked by a fingerprint (RFC 8176 `fpt`).
        amr: ['swk', 'fpt'],
        userVerification: true,
        page: { label: 'Fingerprint on your phone', help: 'Unlock the request in your authenticator app.' },
      },
      options,
    );
  },
});
