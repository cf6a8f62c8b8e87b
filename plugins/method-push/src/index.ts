/**
 * PUSH: the user approves a sign-in on their bound authenticator device by typing the two-digit
 * number the login page shows (number matching, so an approval is never a reflex tap on a stray
 * request: a blind guess is right one time in 90).
 */
import { addDeviceMethod, definePlugin, deviceMethodOptions } from '@gatehouse-auth/core';

export default definePlugin({
  name: '@gatehouse-auth/method-push',
  apiVersion: '^1',
  // The device API's routes: binding the device, its inbox and push steps (decision 69).
  dependencies: ['@gatehouse-auth/devices-api'],
  options: deviceMethodOptions,
  register(api, options) {
    addDeviceMethod(
      api,
      {
        id: 'PUSH',
        // A software key on the device (swk) and more than one channel: the page and the device (mca).
        amr: ['swk', 'mca'],
        numberMatching: true,
        extraFields: ['pass_code'],
        page: { label: 'Approve on your phone', help: 'We send a request to your authenticator app.' },
      },
      options,
    );
  },
});
