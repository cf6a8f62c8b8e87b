import {
  ApiError,
  type Credential,
  type DeviceMethodDefinition,
  type EnrollmentOutcome,
  type Services,
  type UploadedFile,
  type VerifyOutcome,
} from '@gatehouse-auth/core';
import { faceDistance } from './engine/distance.js';
import { FaceEngineBusyError, type FaceEngine } from './engine/face-engine.js';
import { DEFAULTS, DESCRIPTOR_VERSION, type RefusalReason } from './engine/types.js';

/** Credential type of an enrolled face: the descriptor, encrypted. A user may have several. */
export const FACE_CREDENTIAL = 'face';
/** The multipart part that carries the photo, at enrolment and at verification. */
export const PHOTO_PART = 'photo';

export interface FaceMethodDeps {
  services: Pick<Services, 'secrets' | 'devices'>;
  /** The running engine (started at start-up; a restarted one after it was closed). */
  engine(): Promise<Pick<FaceEngine, 'describe'>>;
  /** Largest euclidean distance between descriptors of one person. */
  threshold: number;
  maxPhotoBytes: number;
  maxFacesPerUser: number;
}

type Refusal = { ok: false; code: string; status: number; message: string };

const refuse = (status: number, code: string, message: string): Refusal => ({ ok: false, status, code, message });

/** Why a photo gave no descriptor, as the API says it. */
const REFUSALS: Record<RefusalReason, Refusal> = {
  bad_image: refuse(400, 'PHOTO_INVALID', 'the photo is not a readable JPEG or PNG image'),
  too_large: refuse(
    413,
    'PHOTO_TOO_LARGE',
    `the photo is over ${DEFAULTS.maxSide} pixels a side or ${DEFAULTS.maxPixels / 1e6} megapixels`,
  ),
  no_face: refuse(422, 'FACE_NOT_FOUND', 'no face was found in the photo'),
  several_faces: refuse(422, 'FACE_SEVERAL', 'the photo shows several faces; it must show only the user'),
};

/** Only faces of an earlier pipeline: they cannot be compared, nor converted (see the README). */
const ENROLL_AGAIN = [
  409,
  'FACE_ENROLL_AGAIN',
  'faces enrolled before the engine changed must be enrolled again',
] as const;

/** The user's faces: those this version can compare, and those of an earlier pipeline. */
async function facesOf(credentials: {
  list(type: string): Promise<Credential[]>;
}): Promise<{ current: Credential[]; stale: Credential[] }> {
  const all = await credentials.list(FACE_CREDENTIAL);
  const isCurrent = (c: Credential) => Boolean(c.secret) && c.data.version === DESCRIPTOR_VERSION;
  return { current: all.filter(isCurrent), stale: all.filter((c) => !isCurrent(c)) };
}

/** Descriptors this version can compare (a credential of another pipeline is ignored). */
async function enrolledFaces(credentials: { list(type: string): Promise<Credential[]> }): Promise<Credential[]> {
  return (await facesOf(credentials)).current;
}

/** The FACE method's part of a device method: enrolment, isEnrolled and verify. */
export function faceDefinition(deps: FaceMethodDeps): Omit<DeviceMethodDefinition, 'id' | 'amr' | 'page'> {
  const { services, threshold, maxPhotoBytes, maxFacesPerUser } = deps;

  /** The photo's descriptor, or why there is none. The photo itself is never kept nor logged. */
  async function describe(files: UploadedFile[] | undefined): Promise<{ ok: true; descriptor: number[] } | Refusal> {
    const photo = files?.find((f) => f.fieldName === PHOTO_PART);
    if (!photo)
      return refuse(400, 'FIELD_MISSING', `the multipart part "${PHOTO_PART}" (a JPEG or PNG photo) is required`);
    if (photo.buffer.length > maxPhotoBytes)
      return refuse(413, 'PHOTO_TOO_LARGE', `the photo is over ${maxPhotoBytes} bytes`);
    try {
      const result = await (await deps.engine()).describe(photo.buffer);
      return result.ok ? result : REFUSALS[result.reason];
    } catch (err) {
      if (err instanceof FaceEngineBusyError)
        return refuse(503, 'TEMPORARILY_UNAVAILABLE', 'the server is busy; try again shortly');
      throw err;
    }
  }

  return {
    files: [{ name: PHOTO_PART, maxBytes: maxPhotoBytes, mimeTypes: ['image/jpeg', 'image/png'] }],

    // A face alone proves nothing: it unlocks the key of a device bound to a biometric unlock.
    // Faces of an earlier pipeline count here, so that verify can answer FACE_ENROLL_AGAIN (not
    // a bare "not set up"); enrolment adds current faces beside them.
    async isEnrolled(ctx) {
      if ((await ctx.credentials.list(FACE_CREDENTIAL)).length === 0) return false;
      return (await services.devices.ofUser(ctx.user.id, { biometric: true })).length > 0;
    },

    enrollment: {
      async initiate(ctx): Promise<EnrollmentOutcome> {
        const full = () =>
          refuse(409, 'FACE_LIMIT', `at most ${maxFacesPerUser} faces per user; remove one before adding another`);
        // Faces of an earlier pipeline count for nothing: they are replaced, not added to.
        if ((await enrolledFaces(ctx.credentials)).length >= maxFacesPerUser) return full();
        const described = await describe(ctx.files);
        if (!described.ok) return described;
        const added = await ctx.credentials.add({
          type: FACE_CREDENTIAL,
          secret: services.secrets.encrypt(JSON.stringify(described.descriptor)),
          data: { version: DESCRIPTOR_VERSION },
        });
        // Of setups that raced past the count above, the earliest ones stay.
        const faces = (await enrolledFaces(ctx.credentials)).sort(
          (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id),
        );
        if (faces.findIndex((c) => c.id === added.id) >= maxFacesPerUser) {
          await ctx.credentials.remove(added.id);
          return full();
        }
        ctx.logger.info({ credentialId: added.id, faces: faces.length }, 'face enrolled');
        return { ok: true, done: true, response: { credential_id: added.id, faces: faces.length } };
      },
    },

    // The core has checked the device, its proof over this request and the biometric unlock.
    async verify(ctx): Promise<VerifyOutcome> {
      if (!ctx.device?.biometric || !ctx.device.userVerified) return { ok: false, reason: 'no_user_verification' };
      const { current: enrolled, stale } = await facesOf(ctx.credentials);
      if (enrolled.length === 0 && stale.length > 0) throw new ApiError(...ENROLL_AGAIN);
      if (enrolled.length === 0) return { ok: false, reason: 'not_enrolled' };
      const described = await describe(ctx.files);
      if (!described.ok) throw new ApiError(described.status, described.code, described.message);
      const distance = Math.min(
        ...enrolled.map((c) => faceDistance(described.descriptor, JSON.parse(services.secrets.decrypt(c.secret!)))),
      );
      const match = distance <= threshold;
      ctx.logger.info(
        { distance: Number(distance.toFixed(3)), threshold, faces: enrolled.length, match },
        match ? 'face matched' : 'face did not match',
      );
      return match ? { ok: true } : { ok: false, reason: 'face_mismatch' };
    },
  };
}
