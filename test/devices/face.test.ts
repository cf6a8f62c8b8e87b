/**
 * Issue 10: FACE end to end with real photos (faces cut from face-api's sample images, varied
 * by mirroring and re-lighting for the same person) through the simulator: enrollment by
 * multipart, a photo of the same person accepted and another person refused, the clear 4xx
 * answers for bad photos (nothing stored), and single_factor_auth where an app allows FACE alone.
 */
import { expect } from 'chai';
import type { Authenticator } from '@gatehouse-auth/authenticator';
import { faceFixtures, type FaceFixtures } from '../../plugins/method-face/test/fixtures.js';
import { Browser, loginRequestId, locationOf, pkcePair } from '../oauth/support.js';
import { DEMO_APP, startAuthorization } from '../oauth/demo-server.js';
import {
  admin,
  atSecondStage,
  boundDevice,
  call,
  failure,
  idTokenAfter,
  initiate,
  onlyPush,
  removeDevice,
  startDemoServer,
  type DemoServer,
  methodOf,
} from './support.js';

const KIOSK = { id: 'kiosk', redirectUri: 'http://127.0.0.1:5174/callback' };
const jpeg = (bytes: Buffer) => ({ bytes, type: 'image/jpeg' as const });

describe('FACE with real photos, through the simulator (issue 10)', function () {
  this.timeout(120_000);
  let server: DemoServer;
  let faces: FaceFixtures;
  let phone: Authenticator;

  before(async function () {
    faces = faceFixtures();
    server = await startDemoServer({
      configure(config) {
        config.plugins.push({ name: '@gatehouse-auth/method-face', options: { channel: 'outbox' } });
        const app = config.apps.find((a) => a.client_id === 'demo-app')!;
        app.login_stages = [app.login_stages[0]!, [...app.login_stages[1]!, 'FACE']];
        // A kiosk that lets a face sign in alone; otherwise a password, then a second factor.
        const spa = config.apps.find((a) => a.client_id === 'demo-spa')!;
        config.apps.push({
          ...spa,
          client_id: KIOSK.id,
          name: 'Kiosk',
          redirect_uris: [KIOSK.redirectUri],
          login_stages: [['FACE', 'PASSWORD'], ['TOTP']],
          single_factor_methods: ['FACE'],
        });
      },
    });
    phone = await boundDevice(server, { name: 'Face phone', biometric: true });
  });
  after(() => server?.close());
  afterEach(() => server.clock.advance(1801));

  /** The setup API with a multipart body: `sub` and a photo. */
  async function enrol(photo: Buffer, type = 'image/jpeg') {
    const form = new FormData();
    form.append('sub', server.alice.id);
    form.append('photo', new Blob([photo], { type }), 'face.jpg');
    const res = await fetch(server.url('/verification-actions-srv/setup/FACE/initiation'), {
      method: 'POST',
      headers: admin,
      body: form,
    });
    const json = (await res.json()) as { data?: Record<string, unknown>; error?: { code: string } };
    return { status: res.status, code: json.error?.code, data: json.data ?? {} };
  }

  const faceCount = async () => (await methodOf(server, server.alice.id, 'FACE')).credentials.length;

  it('enrolment refuses bad photos with a clear 4xx and stores nothing, then enrols a face', async function () {
    const corrupt = await enrol(Buffer.from('not an image at all'));
    expect([corrupt.status, corrupt.code]).to.deep.equal([400, 'PHOTO_INVALID']);
    const none = await enrol(faces.noFace);
    expect([none.status, none.code]).to.deep.equal([422, 'FACE_NOT_FOUND']);
    const several = await enrol(faces.severalFaces);
    expect([several.status, several.code]).to.deep.equal([422, 'FACE_SEVERAL']);
    const gif = await enrol(Buffer.from('GIF89a'), 'image/gif');
    expect([gif.status, gif.code]).to.deep.equal([400, 'INVALID_FIELD']);
    const huge = await enrol(Buffer.alloc(3 * 1024 * 1024, 0xff));
    expect(huge.status).to.equal(413);
    expect(await faceCount()).to.equal(0);

    const enrolled = await enrol(faces.persons[0]!.original);
    expect(enrolled.status, JSON.stringify(enrolled)).to.equal(200);
    expect(await faceCount()).to.equal(1);
  });

  it('the same person (mirrored, re-lit) signs in: tokens with amr swk+face; another person is refused', async function () {
    const at = await atSecondStage(server);
    const started = await initiate(server, at, 'FACE');
    const push = await onlyPush(phone);
    await phone.acknowledge(push);
    await phone.allow(push);
    expect(await failure(phone.verify(push, { photo: jpeg(faces.persons[1]!.original) }))).to.deep.equal({
      status: 401,
      code: 'VERIFICATION_FAILED',
    });
    const [again] = await phone.pushes();
    const verified = await phone.verify(again!, { photo: jpeg(faces.persons[0]!.mirrored) });
    expect(verified.status_id).to.equal(started.status_id);
    expect((await idTokenAfter(server, at, started.status_id, 'FACE')).amr).to.include.members(['pwd', 'swk', 'face']);
  });

  it('without the biometric claim, or with a photo of no face, it fails; the exchange answers clearly', async function () {
    const at = await atSecondStage(server);
    await initiate(server, at, 'FACE');
    const push = await onlyPush(phone);
    await phone.allow(push);
    const noUnlock = await failure(phone.verify(push, { photo: jpeg(faces.persons[0]!.brighter), uv: false }));
    expect(noUnlock).to.deep.equal({ status: 401, code: 'VERIFICATION_FAILED' });
    const [again] = await phone.pushes();
    expect(await failure(phone.verify(again!, { photo: jpeg(faces.noFace) }))).to.deep.equal({
      status: 422,
      code: 'FACE_NOT_FOUND',
    });
  });

  it('single_factor_auth: FACE alone completes the kiosk login; the same request at demo-app is refused', async function () {
    const browser = new Browser(server);
    const { verifier, challenge } = pkcePair();
    const params = new URLSearchParams({
      client_id: KIOSK.id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: KIOSK.redirectUri,
      state: 'kiosk',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const auth = await browser.get(`/api/oauth2/authorize/?${params.toString()}`);
    const requestId = loginRequestId(locationOf(auth, server));
    const started = await call(server, '/verification-srv/authentication/FACE/initiation', {
      request_id: requestId,
      usage_type: 'INITIAL_AUTHENTICATION',
      identifier: 'alice',
      single_factor_auth: 'true',
    });
    expect(started.status, JSON.stringify(started)).to.equal(200);
    const statusId = started.data.status_id as string;
    let push;
    for (let i = 0; i < 50 && !push; i++) [push] = await phone.pushes();
    expect(push).to.not.equal(undefined);
    await phone.approve(push!, { photo: jpeg(faces.persons[0]!.png) });

    const done = await browser.postForm('/login/continue', {
      requestId,
      status_id: statusId,
      verificationType: 'FACE',
    });
    const resume = locationOf(done, server);
    expect(resume.pathname).to.equal('/api/oauth2/authorize/resume');
    const callback = locationOf(await browser.get(resume.pathname + resume.search), server);
    expect(callback.origin + callback.pathname).to.equal(KIOSK.redirectUri);
    const code = callback.searchParams.get('code')!;
    const tokens = await fetch(server.url('/oauth/token'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: KIOSK.redirectUri,
        code_verifier: verifier,
        client_id: KIOSK.id,
      }).toString(),
    });
    expect(tokens.status).to.equal(200);

    // The session FACE left satisfies the kiosk again (prompt=none gives a code) but not
    // demo-app, which does not allow FACE alone: there FACE counts for one stage, and the
    // password stage is still to do.
    params.set('prompt', 'none');
    let silent = locationOf(await browser.get(`/api/oauth2/authorize/?${params.toString()}`), server);
    if (silent.pathname === '/api/oauth2/authorize/resume')
      silent = locationOf(await browser.get(silent.pathname + silent.search), server);
    expect(silent.origin + silent.pathname, silent.href).to.equal(KIOSK.redirectUri);
    expect(silent.searchParams.get('code')).to.be.a('string');
    const other = await startAuthorization(browser, server, DEMO_APP, { prompt: 'none' });
    expect(other.location.searchParams.get('error')).to.equal('interaction_required');

    // demo-app does not allow FACE alone.
    const at = await atSecondStage(server);
    const refused = await call(server, '/verification-srv/authentication/FACE/initiation', {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
      single_factor_auth: 'true',
    });
    expect([refused.status, refused.code]).to.deep.equal([400, 'SINGLE_FACTOR_NOT_ALLOWED']);
    // Nor does a method that is not single factor accept the flag.
    const push2 = await call(server, '/verification-srv/authentication/PUSH/initiation', {
      request_id: at.requestId,
      usage_type: 'MULTIFACTOR_AUTHENTICATION',
      sub: server.alice.id,
      single_factor_auth: 'false',
    });
    expect([push2.status, push2.code]).to.deep.equal([400, 'SINGLE_FACTOR_NOT_ALLOWED']);
  });

  it('removing the device leaves FACE not set up (it needs a biometric-bound device)', async function () {
    await removeDevice(server, phone.deviceId);
    expect((await methodOf(server, server.alice.id, 'FACE')).enrolled).to.equal(false);
  });
});
