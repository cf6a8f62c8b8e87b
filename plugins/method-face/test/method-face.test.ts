import { expect } from 'chai';
import type { Logger } from 'pino';
import {
  ApiError,
  type AuthMethod,
  type BoundDevice,
  type EnrollmentHandlers,
  type EnrollmentOutcome,
  type UploadedFile,
  type VerifyContext,
} from '@gatehouse-auth/core';
import {
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  silentLogger,
  verifyContext,
  type FakeServices,
} from '@gatehouse-auth/testing';
import plugin, { closeSharedFaceEngine, DESCRIPTOR_VERSION, sharedFaceEngine } from '../src/index.js';
import { faceFixtures } from './fixtures.js';

const METHOD = 'FACE';
const PHONE: BoundDevice = { deviceId: 'phone-0001', name: "Ada's phone", clientId: 'authn', biometric: true };
const OLD_PHONE: BoundDevice = { deviceId: 'phone-0002', name: 'Old phone', clientId: 'authn', biometric: false };
const MIB = 1024 * 1024;

const fixtures = faceFixtures();
const [ada, eve] = fixtures.persons as [(typeof fixtures.persons)[0], (typeof fixtures.persons)[0]];
/** The closest pair of different women among the samples (0.858 apart): a look-alike. */
const lookAlikes = ['sample4@664,52', 'sample6@1181,305'].map((label) =>
  fixtures.persons.find((p) => p.label === label)!,
);

function photo(buffer: Buffer, mimeType = 'image/jpeg'): UploadedFile {
  return { fieldName: 'photo', mimeType, size: buffer.length, buffer };
}

/** A logger that keeps what was logged at info and above. */
function capturingLogger() {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const log = (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message });
  const logger = { ...silentLogger, info: log, warn: log, error: log } as unknown as Logger;
  return { logger, lines };
}

async function setup(options: Record<string, unknown> = {}, devices: BoundDevice[] = [PHONE]) {
  const services = fakeServices();
  const user = fakeUser();
  services.deviceMap.set(user.id, devices);
  const { methods } = await registerWithFakes(plugin, options, services);
  const method = methods[0] as AuthMethod;
  return { services, user, method, enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function enroll(s: Setup, files: UploadedFile[]): Promise<EnrollmentOutcome> {
  const ctx = enrollmentContext({ services: s.services, user: s.user, method: METHOD, body: { sub: s.user.id } });
  return s.enrollment.initiate({ ...ctx, files });
}

/** The answer of an enrolment that must succeed. */
function response(out: EnrollmentOutcome): { credential_id: string; faces: number } {
  if (!out.ok) expect.fail(`enrolment refused: ${out.code}`);
  return out.response as { credential_id: string; faces: number };
}

async function enrollOk(s: Setup, buffer: Buffer): Promise<string> {
  return response(await enroll(s, [photo(buffer)])).credential_id;
}

function check(
  s: Setup,
  files: UploadedFile[],
  opts: { device?: BoundDevice | null; uv?: boolean; logger?: Logger } = {},
) {
  const fields = { push_id: 'push-1', device_id: PHONE.deviceId, client_id: 'authn' };
  const ctx: VerifyContext = {
    ...verifyContext({ services: s.services, user: s.user, method: METHOD, fields, files }),
    ...(opts.logger ? { logger: opts.logger } : {}),
  };
  const device = opts.device === undefined ? PHONE : opts.device;
  return s.method.verify(device ? { ...ctx, device: { ...device, userVerified: opts.uv ?? true } } : ctx);
}

async function thrown(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => expect.fail('expected an error'),
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(ApiError);
  return error as ApiError;
}

function rows(services: FakeServices) {
  return services.credentialRows.rows.filter((c) => c.method === METHOD);
}

describe('@gatehouse-auth/method-face', function () {
  this.timeout(30_000);
  after(() => closeSharedFaceEngine());

  describe('registration and options', () => {
    it('registers FACE: a biometric device method that takes a photo and may sign in alone', async () => {
      const { method } = await setup();
      expect(method.id).to.equal('FACE');
      expect(method.amr).to.deep.equal(['swk', 'face']);
      expect(method.verifyFields).to.deep.equal(['push_id', 'device_id', 'client_id']);
      expect(method.files).to.deep.equal([
        { name: 'photo', maxBytes: 2 * MIB, mimeTypes: ['image/jpeg', 'image/png'] },
      ]);
      expect(method.singleFactor).to.equal(true);
      expect(method.device).to.deep.equal({ userVerification: true });
      expect(method.page?.label).to.equal('Face recognition');
      expect(method.page?.module).to.be.a('string');
      expect(method.enrollment?.verify).to.equal(undefined);
    });

    it('defaults to 0.65, 2 MiB and 5 faces, and refuses values out of range', async () => {
      const schema = plugin.options!;
      expect(schema.parse({})).to.deep.equal({ threshold: 0.65, max_photo_bytes: 2 * MIB, max_faces_per_user: 5 });
      expect(
        schema.parse({ threshold: 0.3, max_photo_bytes: 8 * MIB, max_faces_per_user: 1, channel: 'x' }),
      ).to.include({ threshold: 0.3, max_photo_bytes: 8 * MIB, max_faces_per_user: 1, channel: 'x' });
      expect(schema.parse({ threshold: 1 })).to.include({ threshold: 1 });
      for (const bad of [
        { threshold: 0.29 },
        { threshold: 1.01 },
        { threshold: '0.4' },
        { max_photo_bytes: 8 * MIB + 1 },
        { max_photo_bytes: 1.5 },
        { max_faces_per_user: 0 },
        { max_faces_per_user: 21 },
        { treshold: 0.4 },
      ]) {
        expect(schema.safeParse(bad).success, JSON.stringify(bad)).to.equal(false);
      }
      const { method } = await setup({ max_photo_bytes: 4 * MIB });
      expect(method.files?.[0]?.maxBytes).to.equal(4 * MIB);
    });
  });

  describe('enrolment', () => {
    it('stores the descriptor only encrypted, and answers the credential id and the number of faces', async () => {
      const s = await setup();
      const out = await enroll(s, [photo(ada.original)]);
      expect(out).to.deep.include({ ok: true, done: true });
      const stored = rows(s.services);
      expect(stored).to.have.length(1);
      const [row] = stored;
      expect(response(out)).to.deep.equal({ credential_id: row!.id, faces: 1 });
      expect(row).to.deep.include({ type: 'face', data: { version: DESCRIPTOR_VERSION }, deviceId: null });

      const expected = await (await sharedFaceEngine()).describe(ada.original);
      if (!expected.ok) expect.fail(expected.reason);
      const text = JSON.stringify(row);
      // faceres gives exact zeros among its 1024 numbers: "0" alone would match any text.
      for (const value of expected.descriptor.filter((v) => v !== 0))
        expect(text).to.not.contain(String(value).slice(0, 7));
      expect(text).to.not.match(/\d\.\d{4}/);
      // What is stored is that descriptor, sealed with the server key.
      expect(JSON.parse(s.services.secrets.decrypt(row!.secret!))).to.deep.equal(expected.descriptor);
      // Nor any byte of the photo.
      expect(text).to.not.contain(ada.original.subarray(0, 64).toString('base64').slice(0, 40));
    });

    it('counts only current faces against max_faces_per_user', async () => {
      const s = await setup({ max_faces_per_user: 1 });
      const old = await enrollOk(s, ada.original);
      await s.services.credentials(s.user.id, METHOD).update(old, { data: { version: 'another/model' } });
      expect(response(await enroll(s, [photo(ada.brighter)]))).to.include({ faces: 1 });
      expect(await enroll(s, [photo(ada.png, 'image/png')])).to.deep.include({
        ok: false,
        status: 409,
        code: 'FACE_LIMIT',
      });
      expect(rows(s.services)).to.have.length(2);
    });

    it('counts the faces, and refuses one more than max_faces_per_user with 409 FACE_LIMIT', async () => {
      const s = await setup({ max_faces_per_user: 2 });
      await enrollOk(s, ada.original);
      expect(response(await enroll(s, [photo(ada.brighter)])).faces).to.equal(2);
      const third = await enroll(s, [photo(ada.png, 'image/png')]);
      expect(third).to.deep.include({ ok: false, status: 409, code: 'FACE_LIMIT' });
      expect(rows(s.services)).to.have.length(2);
    });

    it('refuses a missing, unreadable, faceless, crowded or oversized photo and stores nothing', async () => {
      const s = await setup({ max_photo_bytes: 64 * 1024 });
      const cases: [string, UploadedFile[], number, string][] = [
        ['no photo', [], 400, 'FIELD_MISSING'],
        ['another part', [{ ...photo(ada.original), fieldName: 'selfie' }], 400, 'FIELD_MISSING'],
        ['corrupt bytes', [photo(Buffer.from('definitely not a JPEG'))], 400, 'PHOTO_INVALID'],
        ['a gradient', [photo(fixtures.noFace)], 422, 'FACE_NOT_FOUND'],
        ['a truncated JPEG', [photo(fixtures.severalFaces.subarray(0, 60 * 1024))], 400, 'PHOTO_INVALID'],
        ['over the size', [photo(Buffer.concat([ada.original, Buffer.alloc(64 * 1024)]))], 413, 'PHOTO_TOO_LARGE'],
      ];
      for (const [what, files, status, code] of cases) {
        expect(await enroll(s, files), what).to.deep.include({ ok: false, status, code });
      }
      const big = await setup();
      expect(await enroll(big, [photo(fixtures.severalFaces)])).to.deep.include({
        ok: false,
        status: 422,
        code: 'FACE_SEVERAL',
      });
      expect(rows(s.services)).to.have.length(0);
      expect(rows(big.services)).to.have.length(0);
    });
  });

  describe('verification', () => {
    let s: Setup;
    before(async () => {
      s = await setup();
      await enrollOk(s, ada.original);
    });

    it('accepts another photo of the enrolled person, and logs the distance only', async () => {
      const { logger, lines } = capturingLogger();
      expect(await check(s, [photo(ada.mirrored)], { logger })).to.deep.equal({ ok: true });
      expect(await check(s, [photo(ada.png, 'image/png')])).to.deep.equal({ ok: true });
      expect(await check(s, [photo(ada.sideways)])).to.deep.equal({ ok: true });
      expect(lines).to.have.length(1);
      expect(lines[0]!.message).to.equal('face matched');
      expect(Object.keys(lines[0]!.fields).sort()).to.deep.equal(['distance', 'faces', 'match', 'threshold']);
      expect(lines[0]!.fields.distance).to.be.a('number').below(0.65);
    });

    it('rejects another person as face_mismatch', async () => {
      const { logger, lines } = capturingLogger();
      expect(await check(s, [photo(eve.original)], { logger })).to.deep.equal({ ok: false, reason: 'face_mismatch' });
      expect(lines[0]).to.deep.include({ message: 'face did not match' });
      expect(lines[0]!.fields.distance).to.be.a('number').above(0.65);
    });

    it('answers PHOTO_INVALID, FACE_NOT_FOUND, FACE_SEVERAL and PHOTO_TOO_LARGE as API errors', async () => {
      const cases: [string, Buffer, number, string][] = [
        ['corrupt bytes', ada.original.subarray(0, 1000), 400, 'PHOTO_INVALID'],
        ['a PNG signature and nothing else', ada.png.subarray(0, 40), 400, 'PHOTO_INVALID'],
        ['a gradient', fixtures.noFace, 422, 'FACE_NOT_FOUND'],
        ['a collage', fixtures.severalFaces, 422, 'FACE_SEVERAL'],
        ['over the size', Buffer.concat([ada.original, Buffer.alloc(2 * MIB)]), 413, 'PHOTO_TOO_LARGE'],
      ];
      for (const [what, bytes, status, code] of cases) {
        const error = await thrown(check(s, [photo(bytes)]));
        expect({ status: error.status, code: error.code }, what).to.deep.equal({ status, code });
      }
    });

    it('matches any of the enrolled faces', async () => {
      const both = await setup();
      await enrollOk(both, ada.original);
      await enrollOk(both, eve.original);
      expect(await check(both, [photo(eve.brighter)])).to.deep.equal({ ok: true });
      expect(await check(both, [photo(ada.brighter)])).to.deep.equal({ ok: true });
      expect(await check(both, [photo(lookAlikes[1]!.original)])).to.deep.include({ ok: false });
    });

    it('follows the threshold: at 0.9 a look-alike passes, at the default she does not', async () => {
      const [first, second] = lookAlikes as [(typeof lookAlikes)[0], (typeof lookAlikes)[0]];
      const strict = await setup();
      await enrollOk(strict, first.original);
      expect(await check(strict, [photo(second.original)])).to.deep.equal({ ok: false, reason: 'face_mismatch' });
      const lax = await setup({ threshold: 0.9 });
      await enrollOk(lax, first.original);
      expect(await check(lax, [photo(second.original)])).to.deep.equal({ ok: true });
    });

    it('refuses without describing when nothing is enrolled, or the proof claims no biometric unlock', async () => {
      const empty = await setup();
      expect(await check(empty, [photo(ada.original)])).to.deep.equal({ ok: false, reason: 'not_enrolled' });
      const refused = { ok: false, reason: 'no_user_verification' };
      expect(await check(s, [photo(ada.original)], { uv: false })).to.deep.equal(refused);
      expect(await check(s, [photo(ada.original)], { device: OLD_PHONE })).to.deep.equal(refused);
      expect(await check(s, [photo(ada.original)], { device: null })).to.deep.equal(refused);
    });

    it('answers 409 FACE_ENROLL_AGAIN when every face is of an earlier pipeline, and ignores those beside current ones', async () => {
      const other = await setup();
      const id = await enrollOk(other, ada.original);
      await other.services.credentials(other.user.id, METHOD).update(id, { data: { version: 'another/model' } });
      const error = await thrown(check(other, [photo(ada.original)]));
      expect({ status: error.status, code: error.code, message: error.message }).to.deep.equal({
        status: 409,
        code: 'FACE_ENROLL_AGAIN',
        message: 'faces enrolled before the engine changed must be enrolled again',
      });
      // Enrolled again: the old face is ignored, the new one matches; another woman does not.
      await enrollOk(other, ada.brighter);
      expect(await check(other, [photo(ada.original)])).to.deep.equal({ ok: true });
      expect(await check(other, [photo(eve.original)])).to.deep.equal({ ok: false, reason: 'face_mismatch' });
    });
  });

  describe('isEnrolled', () => {
    const enrolled = (s: Setup) =>
      s.method.isEnrolled(initiateContext({ services: s.services, user: s.user, method: METHOD }));

    it('needs an enrolled face and a device bound to a biometric unlock', async () => {
      const s = await setup({}, [OLD_PHONE]);
      expect(await enrolled(s)).to.equal(false);
      await enrollOk(s, ada.original);
      expect(await enrolled(s)).to.equal(false); // a face, but only a device without biometric
      s.services.deviceMap.set(s.user.id, [OLD_PHONE, PHONE]);
      expect(await enrolled(s)).to.equal(true);
      s.services.deviceMap.set(s.user.id, []);
      expect(await enrolled(s)).to.equal(false);
    });

    it('is true with only faces of an earlier pipeline, so that verify asks to enrol again', async () => {
      const s = await setup();
      const id = await enrollOk(s, ada.original);
      await s.services.credentials(s.user.id, METHOD).update(id, { data: { version: 'another/model' } });
      expect(await enrolled(s)).to.equal(true);
    });

    it('is false with a biometric device but no face', async () => {
      expect(await enrolled(await setup())).to.equal(false);
    });
  });
});
