/**
 * @gatehouse-auth/method-face — FACE: the user takes a photo of their face in their bound
 * authenticator app, after a biometric unlock of the device key. The core checks the device and
 * its signed proof; this plugin compares the photo's face with the faces enrolled for the user
 * (human's BlazeFace and faceres on the TensorFlow WASM backend, in a worker thread).
 */
import { addDeviceMethod, definePlugin, deviceMethodOptions, z } from '@gatehouse-auth/core';
import { sharedFaceEngine } from './engine/shared.js';
import { faceDefinition } from './method.js';

const MIB = 1024 * 1024;

export const faceOptions = deviceMethodOptions.extend({
  /**
   * Largest euclidean distance between the photo's descriptor and an enrolled one (both of
   * length 1) that counts as the same person (0.3–1.0). On the sample faces one woman's photos
   * were 0.38–0.55 apart and two women 0.86 or more; see the README.
   */
  threshold: z.number().min(0.3).max(1).default(0.65),
  /** Largest photo, in bytes (up to 8 MiB). */
  max_photo_bytes: z
    .int()
    .min(16 * 1024)
    .max(8 * MIB)
    .default(2 * MIB),
  /** Faces a user may enrol (photos in different light, with and without glasses). */
  max_faces_per_user: z.int().min(1).max(20).default(5),
});

export type FaceOptions = z.infer<typeof faceOptions>;

export { FACE_CREDENTIAL, PHOTO_PART, faceDefinition, type FaceMethodDeps } from './method.js';
export * from './engine/index.js';

export default definePlugin({
  name: '@gatehouse-auth/method-face',
  apiVersion: '^1',
  // The device API's routes: binding the device, its inbox and push steps (decision 69).
  dependencies: ['@gatehouse-auth/devices-api'],
  options: faceOptions,
  register(api, options) {
    // The engine starts now, in the background; start-up waits for it in the check below, so
    // that the first photo does not wait for the models, and a server without them never starts.
    const starting = sharedFaceEngine();
    starting.catch(() => undefined); // reported by the check
    api.check(async () => {
      try {
        await starting;
      } catch (err) {
        throw new Error(`the face engine failed to start: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    addDeviceMethod(
      api,
      {
        id: 'FACE',
        // A software key (swk) unlocked by the user's face (face), checked twice: by the device
        // (the biometric unlock) and here (the photo).
        amr: ['swk', 'face'],
        userVerification: true,
        singleFactor: true,
        page: { label: 'Face recognition', help: 'Take a photo of your face in your authenticator app.' },
        ...faceDefinition({
          services: api.services,
          engine: () => sharedFaceEngine(),
          threshold: options.threshold,
          maxPhotoBytes: options.max_photo_bytes,
          maxFacesPerUser: options.max_faces_per_user,
        }),
      },
      options,
    );
  },
});
