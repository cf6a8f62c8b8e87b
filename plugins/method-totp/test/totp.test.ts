import { expect } from 'chai';
import { generate } from 'otplib';
import type { AuthMethod, EnrollmentHandlers, JsonObject, VerifyOutcome } from '@gatehouse-auth/core';
import {
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  verifyContext,
  type FakeServices,
} from '@gatehouse-auth/testing';
import plugin from '../src/index.js';

const METHOD = 'TOTP';
const STEP = 30;
/** RFC 6238 Appendix B seed "12345678901234567890" in base32. */
const RFC_SEED = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

async function setup(options: Record<string, unknown> = {}, user = fakeUser()) {
  const services = fakeServices();
  // Mid-step, so ±1 step is unambiguous.
  services.clock.set(new Date('2026-01-01T12:00:10Z'));
  const { methods } = await registerWithFakes(plugin, options, services);
  const method = methods[0] as AuthMethod;
  return { services, method, user, enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

const epochOf = (services: FakeServices) => Math.floor(services.clock.now().getTime() / 1000);
const stepOf = (services: FakeServices) => Math.floor(epochOf(services) / STEP);

/** The code an app shows `steps` time steps away from the server clock. */
function codeAt(s: Setup, secret: string, steps = 0, digits = 6) {
  return generate({ secret, epoch: epochOf(s.services) + steps * STEP, digits });
}

/** Stores a seed as enrollment would, bypassing the QR flow. */
async function addSeed(s: Setup, secret: string, counter = 0) {
  return s.services
    .credentials(s.user.id, METHOD)
    .add({ type: 'seed', secret: s.services.secrets.encrypt(secret), counter });
}

function check(s: Setup, passCode: string) {
  return s.method.verify(
    verifyContext({ services: s.services, user: s.user, method: METHOD, fields: { pass_code: passCode } }),
  );
}

async function checkAndCommit(s: Setup, passCode: string): Promise<VerifyOutcome | boolean> {
  const out = await check(s, passCode);
  if (!out.ok) return out;
  expect(out.commit).to.be.a('function');
  return out.commit!();
}

function enrollStep(
  s: Setup,
  step: 'initiate' | 'scan' | 'verify',
  body: Record<string, unknown>,
  pending: JsonObject | null,
) {
  const handler = s.enrollment[step]!;
  return handler(enrollmentContext({ services: s.services, user: s.user, method: METHOD, body, pending }));
}

function seeds(s: Setup) {
  return s.services.credentialRows.rows.filter((c) => c.userId === s.user.id && c.method === METHOD);
}

const enrolled = (s: Setup) =>
  s.method.isEnrolled(initiateContext({ services: s.services, user: s.user, method: METHOD }));

describe('@gatehouse-auth/method-totp', () => {
  it('registers one method with the spec id, amr and fields', async () => {
    const { method } = await setup();
    expect(method.id).to.equal('TOTP');
    expect(method.amr).to.deep.equal(['otp']);
    expect(method.verifyFields).to.deep.equal(['pass_code']);
    expect(plugin.options!.parse(undefined)).to.deep.equal({ issuer: 'Gatehouse', digits: 6 });
    expect(() => plugin.options!.parse({ digits: 4 })).to.throw();
  });

  it('initiate sends nothing and succeeds', async () => {
    const s = await setup();
    expect(
      await s.method.initiate(initiateContext({ services: s.services, user: s.user, method: METHOD })),
    ).to.deep.equal({
      ok: true,
    });
  });

  describe('enrollment', () => {
    it('initiation answers the otpauth URI, a PNG QR code and the seed, and keeps only ciphertext pending', async () => {
      const s = await setup();
      const out = await enrollStep(s, 'initiate', {}, null);
      if (!out.ok) throw new Error('initiation failed');
      const { otpauth_uri: uri, qr_code: qr, secret } = out.response as Record<string, string>;
      expect(secret).to.match(/^[A-Z2-7]{32,}$/); // ≥160 bits
      expect(uri).to.equal(`otpauth://totp/Gatehouse:alice%40example.test?secret=${secret}&issuer=Gatehouse`);
      expect(qr).to.match(/^data:image\/png;base64,/);
      const png = Buffer.from(qr!.slice('data:image/png;base64,'.length), 'base64');
      expect(png.subarray(0, 8).toString('hex')).to.equal('89504e470d0a1a0a');
      const sealed = out.pending?.sealed as string;
      expect(Object.keys(out.pending ?? {})).to.deep.equal(['sealed']);
      expect(sealed).to.not.contain(secret);
      expect(s.services.secrets.decrypt(sealed)).to.equal(secret);
      expect(out.done).to.equal(undefined);
      expect(seeds(s)).to.have.length(0);
      expect(await enrolled(s)).to.equal(false);
    });

    it('generates a different seed every time', async () => {
      const s = await setup();
      const a = await enrollStep(s, 'initiate', {}, null);
      const b = await enrollStep(s, 'initiate', {}, null);
      expect(a.ok && b.ok && a.response.secret !== b.response.secret).to.equal(true);
    });

    it('uses the issuer option and the username when there is no email', async () => {
      const s = await setup({ issuer: 'Acme Corp', digits: 8 }, fakeUser({ email: null, username: 'bob' }));
      const out = await enrollStep(s, 'initiate', {}, null);
      const uri = out.ok ? (out.response.otpauth_uri as string) : '';
      expect(uri).to.match(/^otpauth:\/\/totp\/Acme%20Corp:bob\?secret=[A-Z2-7]+&issuer=Acme%20Corp&digits=8$/);
    });

    it('scan needs a pending setup and keeps it unchanged', async () => {
      const s = await setup();
      expect(await enrollStep(s, 'scan', {}, null)).to.include({
        ok: false,
        code: 'ENROLLMENT_NOT_STARTED',
        status: 400,
      });
      const started = await enrollStep(s, 'initiate', {}, null);
      const pending = started.ok ? started.pending! : null;
      expect(await enrollStep(s, 'scan', {}, pending)).to.deep.equal({
        ok: true,
        response: { scanned: true },
        pending,
      });
    });

    it('verification needs a pending setup', async () => {
      const s = await setup();
      expect(await enrollStep(s, 'verify', { pass_code: '123456' }, null)).to.include({
        ok: false,
        code: 'ENROLLMENT_NOT_STARTED',
        status: 400,
      });
      expect(await enrollStep(s, 'verify', { pass_code: '123456' }, { other: 'x' })).to.include({
        code: 'ENROLLMENT_NOT_STARTED',
      });
    });

    it('verification refuses a missing, malformed or wrong code and stores nothing', async () => {
      const s = await setup();
      const started = await enrollStep(s, 'initiate', {}, null);
      if (!started.ok) throw new Error('initiation failed');
      const secret = started.response.secret as string;
      const pending = started.pending!;
      expect(await enrollStep(s, 'verify', {}, pending)).to.include({ ok: false, code: 'FIELD_MISSING', status: 400 });
      const right = await codeAt(s, secret);
      const wrong = right === '000000' ? '000001' : '000000';
      for (const passCode of [wrong, right.slice(0, 5), await codeAt(s, secret, 2), await codeAt(s, secret, -2)]) {
        expect(await enrollStep(s, 'verify', { pass_code: passCode }, pending), passCode).to.include({
          ok: false,
          code: 'VERIFICATION_FAILED',
          status: 401,
        });
      }
      expect(seeds(s)).to.have.length(0);
    });

    it('verification with the right code stores the sealed seed with its step as used', async () => {
      const s = await setup();
      const started = await enrollStep(s, 'initiate', {}, null);
      if (!started.ok) throw new Error('initiation failed');
      const secret = started.response.secret as string;
      const code = await codeAt(s, secret);
      const out = await enrollStep(s, 'verify', { pass_code: code }, started.pending!);
      expect(out).to.deep.equal({ ok: true, done: true, pending: null, response: { enrolled: true } });
      const rows = seeds(s);
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ type: 'seed', secret: started.pending!.sealed, counter: stepOf(s.services) });
      expect(await enrolled(s)).to.equal(true);
      // The confirming code cannot complete a login as well; typed again by the user it is
      // refused as the setup's own code (no replay alert), not as a replay.
      expect(rows[0]!.data).to.deep.equal({ setup_step: stepOf(s.services) });
      expect(await check(s, code)).to.deep.equal({ ok: false, reason: 'setup_code' });
      s.services.clock.advance(STEP);
      expect(await checkAndCommit(s, await codeAt(s, secret))).to.equal(true);
    });
  });

  describe('verify', () => {
    it('accepts the current code, and commit spends its time step', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      const { id } = await addSeed(s, secret);
      const out = await check(s, await codeAt(s, secret));
      expect(out.ok).to.equal(true);
      expect(seeds(s)[0]!.counter).to.equal(0); // nothing spent before commit
      expect(await (out as { commit: () => Promise<boolean> }).commit()).to.equal(true);
      expect((await s.services.credentials(s.user.id, METHOD).get(id))!.counter).to.equal(stepOf(s.services));
    });

    it('refuses the same code a second time', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      const code = await codeAt(s, secret);
      expect(await checkAndCommit(s, code)).to.equal(true);
      expect(await check(s, code)).to.deep.equal({ ok: false, reason: 'replay' });
      s.services.clock.advance(STEP); // still inside the drift window as step -1
      expect(await check(s, code)).to.deep.equal({ ok: false, reason: 'replay' });
    });

    it('refuses a replay inside the drift window, of a past and of a future step', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      const previous = await codeAt(s, secret, -1);
      expect(await checkAndCommit(s, previous)).to.equal(true);
      expect(await check(s, previous)).to.deep.equal({ ok: false, reason: 'replay' });

      const next = await codeAt(s, secret, 1);
      expect(await checkAndCommit(s, next)).to.equal(true);
      expect(await check(s, next)).to.deep.equal({ ok: false, reason: 'replay' });
    });

    it('refuses an older step once a newer one was used', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      const current = await codeAt(s, secret);
      const previous = await codeAt(s, secret, -1);
      expect(await checkAndCommit(s, await codeAt(s, secret, 1))).to.equal(true);
      expect(await check(s, current)).to.deep.equal({ ok: false, reason: 'replay' });
      expect(await check(s, previous)).to.deep.equal({ ok: false, reason: 'replay' });
    });

    it('lets only one of two concurrent verifications of one code commit', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      const code = await codeAt(s, secret);
      const [a, b] = await Promise.all([check(s, code), check(s, code)]);
      expect(a!.ok && b!.ok).to.equal(true);
      const commits = await Promise.all([a, b].map((o) => (o as { commit: () => Promise<boolean> }).commit()));
      expect(commits).to.deep.equal([true, false]);
    });

    it('accepts ±1 step of drift and refuses ±2', async () => {
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      for (const [steps, expected] of [
        [-1, true],
        [1, true],
        [-2, false],
        [2, false],
      ] as const) {
        const s = await setup();
        await addSeed(s, secret);
        const out = await check(s, await codeAt(s, secret, steps));
        expect(out.ok, `step ${steps}`).to.equal(expected);
        if (!expected) expect(out).to.deep.equal({ ok: false, reason: 'mismatch' });
      }
    });

    it('uses the server clock at the edges of a step', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      s.services.clock.set(new Date('2026-01-01T12:00:00Z')); // first second of a step
      const twoBack = await codeAt(s, secret, -2);
      const oneBack = await codeAt(s, secret, -1);
      s.services.clock.set(new Date('2026-01-01T12:00:29Z')); // last second of the same step
      expect(await check(s, twoBack)).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect((await check(s, oneBack)).ok).to.equal(true);
    });

    it('refuses malformed codes without checking them', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      const good = await codeAt(s, secret);
      for (const bad of [
        '',
        good.slice(0, 5),
        good + '0',
        ` ${good}`,
        `${good.slice(0, 3)} ${good.slice(3)}`,
        'abcdef',
        '١٢٣٤٥٦',
      ]) {
        expect(await check(s, bad), JSON.stringify(bad)).to.deep.equal({ ok: false, reason: 'malformed' });
      }
    });

    it('reports not_enrolled without a seed, and a wrong code as mismatch', async () => {
      const s = await setup();
      expect(await check(s, '123456')).to.deep.equal({ ok: false, reason: 'not_enrolled' });
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret);
      const window = await Promise.all([-1, 0, 1].map((n) => codeAt(s, secret, n)));
      const wrong = ['000000', '111111', '222222'].find((c) => !window.includes(c))!;
      expect(await check(s, wrong)).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('does not throw when the stored counter is ahead of the window', async () => {
      const s = await setup();
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      await addSeed(s, secret, stepOf(s.services) + 5);
      expect(await check(s, await codeAt(s, secret))).to.deep.equal({ ok: false, reason: 'replay' });
    });

    it('checks every enrolled seed and spends the step of the one that matched', async () => {
      const s = await setup();
      const first = await addSeed(s, 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP');
      const second = await addSeed(s, 'KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU');
      expect(await checkAndCommit(s, await codeAt(s, 'KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU'))).to.equal(true);
      const store = s.services.credentials(s.user.id, METHOD);
      expect((await store.get(first.id))!.counter).to.equal(0);
      expect((await store.get(second.id))!.counter).to.equal(stepOf(s.services));
    });

    it('keeps seeds encrypted at rest', async () => {
      const s = await setup();
      const started = await enrollStep(s, 'initiate', {}, null);
      if (!started.ok) throw new Error('initiation failed');
      const secret = started.response.secret as string;
      await enrollStep(s, 'verify', { pass_code: await codeAt(s, secret) }, started.pending!);
      const stored = seeds(s)[0]!.secret!;
      expect(stored).to.not.contain(secret);
      expect(s.services.secrets.decrypt(stored)).to.equal(secret);
    });

    it('matches the RFC 6238 SHA-1 test vectors with 8 digits', async () => {
      const s = await setup({ digits: 8 });
      const vectors: [number, string][] = [
        [59, '94287082'],
        [1111111109, '07081804'],
        [1111111111, '14050471'],
        [1234567890, '89005924'],
        [2000000000, '69279037'],
        [20000000000, '65353130'],
      ];
      await addSeed(s, RFC_SEED);
      for (const [seconds, code] of vectors) {
        s.services.clock.set(new Date(seconds * 1000));
        expect(await checkAndCommit(s, code), `T=${seconds}`).to.equal(true);
        expect(seeds(s)[0]!.counter).to.equal(Math.floor(seconds / STEP));
      }
    });

    it('is deterministic with 6 digits: the RFC vector at T=59 is 287082', async () => {
      const s = await setup();
      await addSeed(s, RFC_SEED);
      s.services.clock.set(new Date(59_000));
      expect(await generate({ secret: RFC_SEED, epoch: 59 })).to.equal('287082');
      expect(await checkAndCommit(s, '287082')).to.equal(true);
      expect(seeds(s)[0]!.counter).to.equal(1);
    });
  });
});
