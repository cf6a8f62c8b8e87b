import { expect } from 'chai';
import { argon2Hashing, type SecretHasher } from '@gatehouse-auth/core';
import { dictionary } from '@zxcvbn-ts/language-common';
import type { AuthMethod, EnrollmentHandlers, JsonObject } from '@gatehouse-auth/core';
import {
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  verifyContext,
  type FakeServices,
} from '@gatehouse-auth/testing';
import plugin, { createPasswordMethod, isCommonPassword, passwordMethod } from '../src/index.js';

const CHEAP = { memory_cost: 1024, time_cost: 2, parallelism: 1 };
const METHOD = 'PASSWORD';
const GOOD = 'correct horse battery staple';

async function setup(options: Record<string, unknown> = CHEAP) {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, options, services);
  const method = methods[0] as AuthMethod;
  const user = fakeUser();
  return { services, method, user, enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

function enroll({ services, user, enrollment }: Setup, body: JsonObject | Record<string, unknown>) {
  return enrollment.initiate(enrollmentContext({ services, user, method: METHOD, body }));
}

function check({ services, user, method }: Setup, password: string) {
  return method.verify(verifyContext({ services, user, method: METHOD, fields: { password } }));
}

function enrolled({ services, user, method }: Setup) {
  return method.isEnrolled(initiateContext({ services, user, method: METHOD }));
}

function storedRows(services: FakeServices, userId: string) {
  return services.credentialRows.rows.filter((c) => c.userId === userId && c.method === METHOD);
}

describe('@gatehouse-auth/method-password', () => {
  it('registers one method with the spec id, amr and fields', async () => {
    const { method } = await setup();
    expect(method.id).to.equal('PASSWORD');
    expect(method.amr).to.deep.equal(['pwd']);
    expect(method.verifyFields).to.deep.equal(['password']);
    expect(method.enrollment?.verify).to.equal(undefined);
  });

  it('uses OWASP’s argon2id minimum by default (19 MiB, t=2, p=1) and refuses weaker memory than 1 MiB', () => {
    const parsed = plugin.options!.parse({});
    expect(parsed).to.deep.equal({ min_length: 8, max_length: 256, memory_cost: 19456, time_cost: 2, parallelism: 1 });
    expect(() => plugin.options!.parse({ memory_cost: 512 })).to.throw();
    expect(() => plugin.options!.parse({ min_length: 7 })).to.throw();
  });

  it('initiate sends nothing and succeeds', async () => {
    const s = await setup();
    const out = await s.method.initiate(initiateContext({ services: s.services, user: s.user, method: METHOD }));
    expect(out).to.deep.equal({ ok: true });
  });

  describe('enrollment', () => {
    it('stores only an argon2id hash with the configured cost and reports done', async () => {
      const s = await setup();
      const out = await enroll(s, { password: GOOD });
      // The first password replaces nothing; a second one replaces it (the core then ends sessions).
      expect(out).to.deep.equal({ ok: true, done: true, replaced: false, response: { enrolled: true } });
      expect(await enroll(s, { password: GOOD })).to.deep.equal({
        ok: true,
        done: true,
        replaced: true,
        response: { enrolled: true },
      });
      const rows = storedRows(s.services, s.user.id);
      expect(rows).to.have.length(1);
      expect(rows[0]!.type).to.equal('password');
      expect(rows[0]!.secret).to.match(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
      expect(rows[0]!.secret).to.not.contain(GOOD);
      expect(await enrolled(s)).to.equal(true);
    });

    it('refuses a missing or non-string password with FIELD_MISSING', async () => {
      const s = await setup();
      for (const body of [{}, { password: 12345678 }, { password: null }, { password: ['abcdefgh'] }]) {
        const out = await enroll(s, body);
        expect(out).to.include({ ok: false, code: 'FIELD_MISSING', status: 400 });
      }
      expect(storedRows(s.services, s.user.id)).to.have.length(0);
    });

    it('refuses 7 characters and accepts 8', async () => {
      const s = await setup();
      expect(await enroll(s, { password: 'kq7#vZp' })).to.include({
        ok: false,
        code: 'PASSWORD_TOO_SHORT',
        status: 400,
      });
      expect(await enroll(s, { password: 'kq7#vZpx' })).to.include({ ok: true, done: true });
    });

    it('counts Unicode code points, not UTF-16 units', async () => {
      const s = await setup();
      const sevenEmoji = '🦊🐙🦉🐝🦋🐢🦔';
      expect(sevenEmoji.length).to.equal(14);
      expect(await enroll(s, { password: sevenEmoji })).to.include({ ok: false, code: 'PASSWORD_TOO_SHORT' });
      expect(await enroll(s, { password: sevenEmoji + '🐳' })).to.include({ ok: true });
      expect(await check(s, sevenEmoji + '🐳')).to.deep.equal({ ok: true });
    });

    it('accepts 64 and more characters, refuses more than max_length', async () => {
      const s = await setup({ ...CHEAP, max_length: 100 });
      const long = 'Tr0ub4dor&3-'.repeat(8).slice(0, 96);
      expect(await enroll(s, { password: long.slice(0, 64) })).to.include({ ok: true });
      expect(await enroll(s, { password: long })).to.include({ ok: true });
      expect(await enroll(s, { password: long + 'wxyz' })).to.include({ ok: true });
      expect(await enroll(s, { password: long + 'wxyz!' })).to.include({
        ok: false,
        code: 'PASSWORD_TOO_LONG',
        status: 400,
      });
    });

    it('defaults max_length to 256 code points', async () => {
      const s = await setup();
      const base = 'a1B2c3D4e5F6g7H8'.repeat(16);
      expect(await enroll(s, { password: base })).to.include({ ok: true });
      expect(await enroll(s, { password: base + 'x' })).to.include({ code: 'PASSWORD_TOO_LONG' });
    });

    it('refuses common passwords case-insensitively and says why', async () => {
      const s = await setup();
      for (const password of ['password', '12345678', 'PassWord1', 'iloveyou', 'QWERTYUIOP']) {
        const out = await enroll(s, { password });
        expect(out, password).to.include({ ok: false, code: 'PASSWORD_TOO_COMMON', status: 400 });
        expect((out as { message: string }).message).to.match(/list of common or breached passwords/);
      }
      expect(storedRows(s.services, s.user.id)).to.have.length(0);
    });

    it('has every one of the 10,000 most common passwords on its list', () => {
      const top = dictionary['passwords-common'].slice(0, 10_000);
      expect(top).to.have.length(10_000);
      expect(top.filter((p) => !isCommonPassword(p))).to.deep.equal([]);
      expect(top.filter((p) => !isCommonPassword(p.toUpperCase()))).to.deep.equal([]);
      expect(isCommonPassword('vX9-q2!mLr#7pE')).to.equal(false);
    });

    it('has no composition rules: all lower-case letters are fine', async () => {
      const s = await setup();
      expect(await enroll(s, { password: 'sunlit meadow gravel' })).to.include({ ok: true });
    });

    it('replaces the previous password', async () => {
      const s = await setup();
      await enroll(s, { password: GOOD });
      await enroll(s, { password: 'another long secret' });
      expect(storedRows(s.services, s.user.id)).to.have.length(1);
      expect(await check(s, GOOD)).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, 'another long secret')).to.deep.equal({ ok: true });
    });
  });

  describe('verify', () => {
    it('accepts the right password and refuses a wrong one', async () => {
      const s = await setup();
      await enroll(s, { password: GOOD });
      expect(await check(s, GOOD)).to.deep.equal({ ok: true });
      expect(await check(s, GOOD + ' ')).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, 'Correct horse battery staple')).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, '')).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('a hash of other parameters is stored again at today’s cost by a successful login (on commit), never by a failed one', async () => {
      const s = await setup();
      await enroll(s, { password: GOOD });
      const before = storedRows(s.services, s.user.id)[0]!.secret!;
      expect(before).to.include('m=1024,t=2,p=1');
      // The same users, the cost raised in the config.
      const { methods } = await registerWithFakes(plugin, { ...CHEAP, memory_cost: 2048 }, s.services);
      const raised = { ...s, method: methods[0] as AuthMethod };
      expect(await check(raised, 'wrong password, wrong')).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(storedRows(s.services, s.user.id)[0]!.secret).to.equal(before);
      const out = await check(raised, GOOD);
      expect(out.ok).to.equal(true);
      expect(storedRows(s.services, s.user.id)[0]!.secret).to.equal(before); // not before the commit
      expect(await (out as { commit: () => Promise<boolean> }).commit()).to.equal(true);
      const after = storedRows(s.services, s.user.id)[0]!.secret!;
      expect(after).to.include('m=2048,t=2,p=1');
      expect(await check(raised, GOOD)).to.deep.equal({ ok: true }); // nothing left to rehash
    });

    it('does not truncate: the first 72 characters of a 100-character password fail', async () => {
      const s = await setup();
      const hundred =
        'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs! 0123456789@@@@';
      expect([...hundred].length).to.equal(100);
      expect(await enroll(s, { password: hundred })).to.include({ ok: true });
      expect(await check(s, hundred)).to.deep.equal({ ok: true });
      expect(await check(s, hundred.slice(0, 72))).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, hundred.slice(0, 99))).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('normalises with NFKC on enrollment and on verify alike', async () => {
      const s = await setup();
      const composed = 'Café crème brûlée';
      const decomposed = composed.normalize('NFD');
      expect(decomposed).to.not.equal(composed);
      await enroll(s, { password: decomposed });
      expect(await check(s, composed)).to.deep.equal({ ok: true });
      await enroll(s, { password: 'ﬁnancial ﬁgures' }); // U+FB01 ligature, NFKC → "fi"
      expect(await check(s, 'financial figures')).to.deep.equal({ ok: true });
    });

    it('reports not_enrolled for a user without a password', async () => {
      const s = await setup();
      expect(await check(s, GOOD)).to.deep.equal({ ok: false, reason: 'not_enrolled' });
      expect(await enrolled(s)).to.equal(false);
    });

    it('checks are scoped to the user', async () => {
      const s = await setup();
      await enroll(s, { password: GOOD });
      const other = fakeUser({ username: 'bob' });
      const out = await s.method.verify(
        verifyContext({ services: s.services, user: other, method: METHOD, fields: { password: GOOD } }),
      );
      expect(out).to.deep.equal({ ok: false, reason: 'not_enrolled' });
    });

    it('runs one hash check even when the user has no password, so timing reveals nothing', async () => {
      const real = argon2Hashing().withCost({ memoryCost: 1024, timeCost: 2, parallelism: 1 });
      const checked: string[] = [];
      const counting: SecretHasher = {
        hash: (p) => real.hash(p),
        verify: (h, p) => (checked.push(h), real.verify(h, p)),
      };
      const dummyHash = await real.hash('dummy value');
      const method = passwordMethod({ hasher: counting, policy: { minLength: 8, maxLength: 256 }, dummyHash });
      const services = fakeServices();
      const user = fakeUser();
      const out = await method.verify(
        verifyContext({ services, user, method: METHOD, fields: { password: 'dummy value' } }),
      );
      expect(out).to.deep.equal({ ok: false, reason: 'not_enrolled' });
      expect(checked).to.deep.equal([dummyHash]);
    });

    it('the dummy hash has the configured cost, like real hashes', async () => {
      const real = argon2Hashing().withCost({ memoryCost: 1024, timeCost: 2, parallelism: 1 });
      const checked: string[] = [];
      const spying: SecretHasher = { hash: real.hash, verify: (h, p) => (checked.push(h), real.verify(h, p)) };
      const method = await createPasswordMethod(plugin.options!.parse(CHEAP), spying);
      const services = fakeServices();
      const user = fakeUser();
      await method.enrollment!.initiate(
        enrollmentContext({ services, user, method: METHOD, body: { password: GOOD } }),
      );
      await method.verify(verifyContext({ services, user, method: METHOD, fields: { password: 'not it at all' } }));
      const stranger = fakeUser({ username: 'mallory' });
      await method.verify(verifyContext({ services, user: stranger, method: METHOD, fields: { password: 'not it' } }));
      const params = (hash: string) => hash.split('$').slice(0, 4).join('$');
      expect(checked).to.have.length(2);
      expect(checked[1]).to.not.equal(checked[0]);
      expect(params(checked[1]!)).to.equal(params(checked[0]!));
      expect(params(checked[0]!)).to.equal('$argon2id$v=19$m=1024,t=2,p=1');
    });
  });
});
