import { expect } from 'chai';
import {
  argon2Hashing,
  type AuthMethod,
  type BoundDevice,
  type EnrollmentHandlers,
  type EnrollmentOutcome,
  type HashCost,
  type SecretHasher,
  type VerifyContext,
} from '@gatehouse-auth/core';
import {
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  verifyContext,
  type FakeServices,
} from '@gatehouse-auth/testing';
import plugin, { normalizePattern, PATTERN_HASH_COST } from '../src/index.js';

const METHOD = 'PATTERN';
const CHEAP: HashCost = { memoryCost: 1024, timeCost: 2, parallelism: 1 };
const PHONE: BoundDevice = { deviceId: 'phone-0001', name: "Ada's phone", clientId: 'authn', biometric: true };
const TABLET: BoundDevice = { deviceId: 'tablet-0002', name: "Ada's tablet", clientId: 'authn', biometric: false };
const STRANGER: BoundDevice = { deviceId: 'other-0003', name: "Bob's phone", clientId: 'authn', biometric: false };
const GOOD = 'RED[1,5,9,6]';

/**
 * Services whose hashing is real argon2id at a low cost, whatever the plugin asks for (it
 * records what it asked for), and which count the hashes checked.
 */
function cheapServices() {
  const services = fakeServices();
  const real = argon2Hashing().withCost(CHEAP);
  const asked: HashCost[] = [];
  const verified: string[] = [];
  const hasher: SecretHasher = {
    hash: (secret) => real.hash(secret),
    verify: (hash, secret) => (verified.push(hash), real.verify(hash, secret)),
  };
  services.provided.set('passwordHashing', { withCost: (cost: HashCost) => (asked.push(cost), hasher) });
  return { services, asked, verified };
}

async function setup(options: Record<string, unknown> = {}, shared?: ReturnType<typeof cheapServices>) {
  const hashing = shared ?? cheapServices();
  const { services } = hashing;
  const user = fakeUser();
  const bob = fakeUser({ username: 'bob' });
  services.deviceMap.set(user.id, [PHONE, TABLET]);
  services.deviceMap.set(bob.id, [STRANGER]);
  const { methods } = await registerWithFakes(plugin, options, services);
  const method = methods[0] as AuthMethod;
  return { ...hashing, method, user, bob, enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function enroll(s: Setup, body: Record<string, unknown>, user = s.user): Promise<EnrollmentOutcome> {
  return s.enrollment.initiate(enrollmentContext({ services: s.services, user, method: METHOD, body }));
}

function check(s: Setup, passCode: string, device: BoundDevice | null = PHONE, user = s.user) {
  const fields = { push_id: 'push-1', device_id: device?.deviceId ?? 'none', client_id: 'authn', pass_code: passCode };
  const ctx: VerifyContext = verifyContext({ services: s.services, user, method: METHOD, fields });
  return s.method.verify(device ? { ...ctx, device: { ...device, userVerified: false } } : ctx);
}

function enrolled(s: Setup, user = s.user) {
  return s.method.isEnrolled(initiateContext({ services: s.services, user, method: METHOD }));
}

function accepts(s: Setup, device: BoundDevice) {
  return s.method.device!.accepts!(initiateContext({ services: s.services, user: s.user, method: METHOD }), device);
}

function rows(services: FakeServices, userId: string) {
  return services.credentialRows.rows.filter((c) => c.userId === userId && c.method === METHOD);
}

describe('@gatehouse-auth/method-pattern', () => {
  describe('registration and options', () => {
    it('registers PATTERN as a device method with the pass_code field', async () => {
      const { method } = await setup();
      expect(method.id).to.equal('PATTERN');
      expect(method.amr).to.deep.equal(['swk', 'pin']);
      expect(method.verifyFields).to.deep.equal(['push_id', 'device_id', 'client_id', 'pass_code']);
      expect(method.device?.accepts).to.be.a('function');
      expect(method.device?.numberMatching).to.equal(undefined);
      expect(method.page?.label).to.equal('Pattern on your phone');
      expect(method.page?.module).to.be.a('string');
      expect(method.enrollment?.verify).to.equal(undefined);
    });

    it('hashes with the password cost of argon2id', async () => {
      const { asked } = await setup();
      expect(asked).to.deep.equal([PATTERN_HASH_COST]);
      expect(PATTERN_HASH_COST).to.deep.equal({ memoryCost: 65536, timeCost: 3, parallelism: 4 });
    });

    it('defaults to 4 dots and 10 failures, and refuses values out of range', () => {
      const schema = plugin.options!;
      expect(schema.parse({})).to.deep.equal({ min_dots: 4, max_failures: 10 });
      expect(schema.parse({ min_dots: 9, max_failures: 3, channel: 'push' })).to.deep.equal({
        min_dots: 9,
        max_failures: 3,
        channel: 'push',
      });
      expect(schema.parse({ max_failures: 20 })).to.include({ max_failures: 20 });
      for (const bad of [
        { min_dots: 3 },
        { min_dots: 10 },
        { min_dots: 4.5 },
        { min_dots: '5' },
        { max_failures: 2 },
        { max_failures: 21 },
        { channel: '' },
        { max_failure: 5 },
      ]) {
        expect(schema.safeParse(bad).success, JSON.stringify(bad)).to.equal(false);
      }
    });

    it('checks at start-up that the channel sends push messages', async () => {
      await registerWithFakes(plugin, { channel: 'capture' }, cheapServices().services);
      let error: unknown;
      await registerWithFakes(plugin, { channel: 'nope' }, cheapServices().services).catch((e: unknown) => (error = e));
      expect(String(error)).to.include('options.channel');
    });
  });

  describe('the pattern syntax', () => {
    it('normalises the colour to upper case and drops spaces', () => {
      expect(normalizePattern(' red [ 1, 5 ,9,\t6 ] ', 4)).to.equal('RED[1,5,9,6]');
      expect(normalizePattern('Purple[9,8,7,6,5,4,3,2,1]', 4)).to.equal('PURPLE[9,8,7,6,5,4,3,2,1]');
      for (const colour of ['RED', 'GREEN', 'BLUE', 'YELLOW', 'PURPLE', 'ORANGE'])
        expect(normalizePattern(`${colour.toLowerCase()}[1,2,3,4]`, 4)).to.equal(`${colour}[1,2,3,4]`);
    });

    it('enforces the number of dots', () => {
      expect(normalizePattern('RED[1,2,3,4,5]', 6)).to.equal(null);
      expect(normalizePattern('RED[1,2,3,4,5,6]', 6)).to.equal('RED[1,2,3,4,5,6]');
    });
  });

  describe('enrollment', () => {
    it('stores only an argon2id hash, tied to the device and named after it', async () => {
      const s = await setup();
      const out = await enroll(s, { sub: s.user.id, device_id: PHONE.deviceId, pattern: GOOD });
      expect(out).to.deep.equal({ ok: true, done: true, response: { device_id: PHONE.deviceId, enrolled: true } });
      const stored = rows(s.services, s.user.id);
      expect(stored).to.have.length(1);
      expect(stored[0]).to.deep.include({ type: 'pattern', deviceId: PHONE.deviceId, label: PHONE.name });
      expect(stored[0]!.secret).to.match(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
      const text = JSON.stringify(stored[0]);
      for (const part of [GOOD, 'RED', '1,5,9,6', '[1']) expect(text).to.not.contain(part);
      expect(await enrolled(s)).to.equal(true);
    });

    it('hashes the normalised pattern', async () => {
      const s = await setup();
      await enroll(s, { device_id: PHONE.deviceId, pattern: ' red [1, 5, 9, 6]' });
      expect(await check(s, GOOD)).to.deep.equal({ ok: true });
      expect(await check(s, 'Red[ 1,5,9,6 ]')).to.deep.equal({ ok: true });
    });

    it("replaces the device's previous pattern and leaves the other devices' alone", async () => {
      const s = await setup();
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      await enroll(s, { device_id: TABLET.deviceId, pattern: 'BLUE[7,8,9,6]' });
      await enroll(s, { device_id: PHONE.deviceId, pattern: 'GREEN[2,4,6,8]' });
      const stored = rows(s.services, s.user.id);
      expect(stored.map((c) => c.deviceId).sort()).to.deep.equal([PHONE.deviceId, TABLET.deviceId]);
      expect(await check(s, GOOD)).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, 'GREEN[2,4,6,8]')).to.deep.equal({ ok: true });
      expect(await check(s, 'BLUE[7,8,9,6]', TABLET)).to.deep.equal({ ok: true });
    });

    it("refuses another user's device and an unknown device with DEVICE_NOT_FOUND", async () => {
      const s = await setup();
      for (const deviceId of [STRANGER.deviceId, 'no-such-device']) {
        const out = await enroll(s, { device_id: deviceId, pattern: GOOD });
        expect(out, deviceId).to.include({ ok: false, code: 'DEVICE_NOT_FOUND', status: 404 });
      }
      expect(rows(s.services, s.user.id)).to.have.length(0);
      expect(rows(s.services, s.bob.id)).to.have.length(0);
      expect(await enrolled(s)).to.equal(false);
    });

    it('refuses a missing device_id or pattern with FIELD_MISSING', async () => {
      const s = await setup();
      for (const body of [
        { pattern: GOOD },
        { device_id: '', pattern: GOOD },
        { device_id: 42, pattern: GOOD },
        { device_id: PHONE.deviceId },
        { device_id: PHONE.deviceId, pattern: ['RED', 1, 5, 9, 6] },
      ]) {
        expect(await enroll(s, body), JSON.stringify(body)).to.include({
          ok: false,
          code: 'FIELD_MISSING',
          status: 400,
        });
      }
      expect(rows(s.services, s.user.id)).to.have.length(0);
    });

    it('refuses malformed patterns with INVALID_FIELD and says the rule', async () => {
      const s = await setup();
      const malformed = [
        'RED[1,5,9]', // too few dots
        'RED[1,5,5,9]', // a dot twice
        'RED[0,1,2,3]', // dot 0
        'RED[1,2,3,10]', // dot 10
        'RED[1,2,3,4,5,6,7,8,9,1]',
        'PINK[1,2,3,4]', // unknown colour
        'RÉD[1,2,3,4]',
        '[1,2,3,4]',
        'RED',
        'RED[]',
        'RED[1,2,3,4',
        'RED(1,2,3,4)',
        'RED[1;2;3;4]',
        'RED[1,2,,3,4]',
        'RED[1,2,3,4,]',
        'RED[a,b,c,d]',
        'RED[-1,2,3,4]',
        'RED[1,2,3,4][5]',
        'RED[01,2,3,4]',
        'garbage',
        '',
        'RED[1,2,3,4]'.padEnd(300, ' ') + 'x',
      ];
      for (const pattern of malformed) {
        const out = await enroll(s, { device_id: PHONE.deviceId, pattern });
        expect(out, pattern).to.include({ ok: false, code: 'INVALID_FIELD', status: 400 });
        const { message } = out as { message: string };
        expect(message).to.contain('RED, GREEN, BLUE, YELLOW, PURPLE, ORANGE');
        expect(message).to.contain('4 to 9 different dots of 1–9');
      }
      expect(rows(s.services, s.user.id)).to.have.length(0);
    });

    it('requires min_dots dots for a new pattern', async () => {
      const s = await setup({ min_dots: 6 });
      const out = await enroll(s, { device_id: PHONE.deviceId, pattern: 'RED[1,2,3,4,5]' });
      expect(out).to.include({ ok: false, code: 'INVALID_FIELD' });
      expect((out as { message: string }).message).to.contain('6 to 9 different dots');
      expect(await enroll(s, { device_id: PHONE.deviceId, pattern: 'RED[1,2,3,4,5,6]' })).to.include({ ok: true });
    });
  });

  describe('verify', () => {
    it('accepts the right pattern and refuses a wrong one', async () => {
      const s = await setup();
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      expect(await check(s, GOOD)).to.deep.equal({ ok: true });
      for (const wrong of ['RED[1,5,9,3]', 'BLUE[1,5,9,6]', 'RED[6,9,5,1]', 'RED[1,5,9,6,3]'])
        expect(await check(s, wrong), wrong).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('refuses a malformed pass_code without checking a hash or counting a failure', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      for (const bad of ['', 'RED', 'RED[1,5,9]', 'RED[1,1,5,9]', 'PINK[1,5,9,6]', 'x'.repeat(10_000)])
        expect(await check(s, bad), bad).to.deep.equal({ ok: false, reason: 'malformed_pattern' });
      expect(s.verified).to.have.length(0);
      expect(await check(s, GOOD)).to.deep.equal({ ok: true });
    });

    it('checks a pattern set up under a lower min_dots', async () => {
      const shared = cheapServices();
      const before = await setup({ min_dots: 4 }, shared);
      await enroll(before, { device_id: PHONE.deviceId, pattern: GOOD });
      const { methods } = await registerWithFakes(plugin, { min_dots: 6 }, shared.services);
      const after = { ...before, method: methods[0] as AuthMethod };
      expect(await check(after, GOOD)).to.deep.equal({ ok: true });
    });

    it("only checks the pattern of the device that signed: another device's does not count", async () => {
      const s = await setup();
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      expect(await check(s, GOOD, TABLET)).to.deep.equal({ ok: false, reason: 'no_pattern' });
      await enroll(s, { device_id: TABLET.deviceId, pattern: 'ORANGE[3,2,1,4]' });
      expect(await check(s, GOOD, TABLET)).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, 'ORANGE[3,2,1,4]', PHONE)).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, 'ORANGE[3,2,1,4]', TABLET)).to.deep.equal({ ok: true });
    });

    it("does not take another user's pattern", async () => {
      const s = await setup();
      await enroll(s, { device_id: STRANGER.deviceId, pattern: GOOD }, s.bob);
      expect(await check(s, GOOD, STRANGER, s.bob)).to.deep.equal({ ok: true });
      expect(await check(s, GOOD, STRANGER, s.user)).to.deep.equal({ ok: false, reason: 'no_pattern' });
    });

    it('refuses without a device or once the pattern is gone with its device', async () => {
      const s = await setup();
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      expect(await check(s, GOOD, null)).to.deep.equal({ ok: false, reason: 'no_device' });
      const store = s.services.credentials(s.user.id, METHOD);
      for (const c of await store.list()) await store.remove(c.id);
      expect(await check(s, GOOD)).to.deep.equal({ ok: false, reason: 'no_pattern' });
      expect(await enrolled(s)).to.equal(false);
    });

    it('pushes go only to a device with a usable pattern', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      expect(await accepts(s, PHONE)).to.equal(true);
      expect(await accepts(s, TABLET)).to.equal(false);
      for (let i = 0; i < 3; i++) await check(s, 'RED[1,2,3,4]');
      expect(await accepts(s, PHONE)).to.equal(false);
    });
  });

  describe('lock-out', () => {
    it('locks after max_failures wrong patterns in a row, even against the right one, until set up again', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      expect(await check(s, 'RED[1,2,3,4]')).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, 'RED[1,2,3,5]')).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await enrolled(s)).to.equal(true);
      expect(await check(s, 'RED[1,2,3,6]')).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(rows(s.services, s.user.id)[0]!.data).to.include({ locked: true });
      const checked = s.verified.length;
      expect(await check(s, GOOD)).to.deep.equal({ ok: false, reason: 'pattern_locked' });
      expect(await check(s, 'RED[1,2,3,4]')).to.deep.equal({ ok: false, reason: 'pattern_locked' });
      expect(s.verified).to.have.length(checked);
      expect(await enrolled(s)).to.equal(false);

      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      expect(await enrolled(s)).to.equal(true);
      expect(await check(s, GOOD)).to.deep.equal({ ok: true });
    });

    it('a right pattern resets the count', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      for (let round = 0; round < 3; round++) {
        expect(await check(s, 'BLUE[1,2,3,4]')).to.deep.include({ ok: false, reason: 'mismatch' });
        expect(await check(s, 'BLUE[1,2,3,4]')).to.deep.include({ ok: false, reason: 'mismatch' });
        expect(await check(s, GOOD)).to.deep.equal({ ok: true });
      }
      for (let i = 0; i < 5; i++) expect(await check(s, GOOD)).to.deep.equal({ ok: true });
      expect(await enrolled(s)).to.equal(true);
    });

    it('defaults to 10 failures', async () => {
      const s = await setup();
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      for (let i = 0; i < 9; i++) await check(s, 'GREEN[1,2,3,4]');
      expect(await check(s, GOOD)).to.deep.equal({ ok: true });
      for (let i = 0; i < 10; i++) await check(s, 'GREEN[1,2,3,4]');
      expect(await check(s, GOOD)).to.deep.equal({ ok: false, reason: 'pattern_locked' });
    });

    it('counts per device: a lock on one leaves the other usable', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      await enroll(s, { device_id: TABLET.deviceId, pattern: GOOD });
      for (let i = 0; i < 3; i++) await check(s, 'RED[1,2,3,4]', PHONE);
      expect(await check(s, GOOD, PHONE)).to.deep.equal({ ok: false, reason: 'pattern_locked' });
      expect(await check(s, GOOD, TABLET)).to.deep.equal({ ok: true });
      expect(await enrolled(s)).to.equal(true);
    });

    it('concurrent guesses get no more than max_failures hash checks between them', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      const guesses = ['1,2,3,4', '1,2,3,5', '1,2,3,6', '1,2,3,7', '1,2,3,8', '1,2,4,3', '1,2,4,5', '1,2,4,6'];
      const outcomes = await Promise.all([...guesses.map((g) => check(s, `RED[${g}]`)), check(s, GOOD)]);
      expect(s.verified).to.have.length(3);
      const reasons = outcomes.map((o) => (o.ok ? 'ok' : o.reason));
      expect(reasons.filter((r) => r === 'pattern_locked')).to.have.length(6);
    });

    it('never logs the pattern', async () => {
      const s = await setup({ max_failures: 3 });
      await enroll(s, { device_id: PHONE.deviceId, pattern: GOOD });
      const lines: string[] = [];
      const record = (...args: unknown[]) => void lines.push(JSON.stringify(args));
      const logger = { trace: record, debug: record, info: record, warn: record, error: record, fatal: record };
      const verifyWith = (passCode: string) => {
        const fields = { push_id: 'p', device_id: PHONE.deviceId, client_id: 'authn', pass_code: passCode };
        const ctx = verifyContext({ services: s.services, user: s.user, method: METHOD, fields });
        return s.method.verify({
          ...ctx,
          logger: logger as unknown as VerifyContext['logger'],
          device: { ...PHONE, userVerified: false },
        });
      };
      for (const guess of ['RED[1,2,3,4]', 'RED[1,2,3,5]', 'RED[1,2,3,6]', GOOD]) await verifyWith(guess);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.contain('locked');
      for (const part of ['RED', '1,2,3', '1,5,9,6']) expect(lines.join('\n')).to.not.contain(part);
    });
  });
});
