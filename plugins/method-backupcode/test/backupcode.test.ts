import { expect } from 'chai';
import { argon2Hashing, type SecretHasher } from '@gatehouse-auth/core';
import type { AuthMethod, EnrollmentHandlers, VerifyOutcome } from '@gatehouse-auth/core';
import {
  enrollmentContext,
  fakeServices,
  fakeUser,
  initiateContext,
  registerWithFakes,
  verifyContext,
} from '@gatehouse-auth/testing';
import plugin, { createBackupCodeMethod, formatCode, normalizeCode } from '../src/index.js';

const CHEAP = { memory_cost: 1024, time_cost: 2, parallelism: 1 };
const METHOD = 'BACKUPCODE';
const FORMAT = /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;

async function setup(options: Record<string, unknown> = CHEAP) {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, options, services);
  const method = methods[0] as AuthMethod;
  return { services, method, user: fakeUser(), enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function enroll(s: Setup): Promise<string[]> {
  const out = await s.enrollment.initiate(enrollmentContext({ services: s.services, user: s.user, method: METHOD }));
  if (!out.ok) throw new Error('enrollment failed');
  expect(out.done).to.equal(true);
  return out.response.codes as string[];
}

function check(s: Setup, passCode: string) {
  return s.method.verify(
    verifyContext({ services: s.services, user: s.user, method: METHOD, fields: { pass_code: passCode } }),
  );
}

async function use(s: Setup, passCode: string): Promise<VerifyOutcome | boolean> {
  const out = await check(s, passCode);
  if (!out.ok) return out;
  expect(out.commit).to.be.a('function');
  return out.commit!();
}

const rows = (s: Setup) => s.services.credentialRows.rows.filter((c) => c.userId === s.user.id && c.method === METHOD);
const enrolled = (s: Setup) =>
  s.method.isEnrolled(initiateContext({ services: s.services, user: s.user, method: METHOD }));

describe('@gatehouse-auth/method-backupcode', () => {
  it('registers one method with the spec id, amr and fields', async () => {
    const { method } = await setup();
    expect(method.id).to.equal('BACKUPCODE');
    expect(method.amr).to.deep.equal(['otp']);
    expect(method.verifyFields).to.deep.equal(['pass_code']);
    expect(plugin.options!.parse(undefined)).to.deep.equal({
      count: 10,
      memory_cost: 19456,
      time_cost: 2,
      parallelism: 1,
    });
    expect(() => plugin.options!.parse({ count: 0 })).to.throw();
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
    it('shows 10 distinct codes once and stores only lookup ids and argon2id hashes', async () => {
      const s = await setup();
      expect(await enrolled(s)).to.equal(false);
      const codes = await enroll(s);
      expect(codes).to.have.length(10);
      expect(new Set(codes).size).to.equal(10);
      for (const code of codes) expect(code).to.match(FORMAT);
      const stored = rows(s);
      expect(stored).to.have.length(10);
      const plain = codes.map((c) => c.replace(/-/g, ''));
      stored.forEach((row, i) => {
        expect(row.type).to.equal('code');
        // The label a listing shows names the code by its place, never by its characters.
        expect(row.label).to.equal(`Backup code ${i + 1}`);
        expect(row.data.lookup).to.equal(plain[i]!.slice(0, 4));
        expect(row.secret).to.match(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
        expect(row.secret).to.not.contain(plain[i]!.slice(4));
        expect(row.usedAt).to.equal(null);
      });
      expect(await enrolled(s)).to.equal(true);
    });

    it('takes the set size from the count option', async () => {
      const s = await setup({ ...CHEAP, count: 3 });
      expect(await enroll(s)).to.have.length(3);
      expect(rows(s)).to.have.length(3);
    });

    it('regenerating replaces the whole set and invalidates the old codes', async () => {
      const s = await setup();
      const old = await enroll(s);
      expect(await use(s, old[0]!)).to.equal(true);
      const fresh = await enroll(s);
      expect(rows(s)).to.have.length(10);
      expect(rows(s).every((r) => r.usedAt === null)).to.equal(true);
      for (const code of old.slice(0, 3)) expect((await check(s, code)).ok, code).to.equal(false);
      expect(await use(s, fresh[0]!)).to.equal(true);
    });
  });

  describe('verify', () => {
    it('accepts a code once; it is spent only by commit', async () => {
      const s = await setup();
      const [code] = await enroll(s);
      const out = await check(s, code!);
      expect(out.ok).to.equal(true);
      expect(rows(s).filter((r) => r.usedAt)).to.have.length(0); // not spent before commit
      expect(await (out as { commit: () => Promise<boolean> }).commit()).to.equal(true);
      expect(rows(s).filter((r) => r.usedAt)).to.have.length(1);
      expect(await check(s, code!)).to.deep.equal({ ok: false, reason: 'used' });
    });

    it('a set made before the lookup id moved to data (label = lookup id) still works', async () => {
      const s = await setup();
      const [code] = await enroll(s);
      for (const row of rows(s)) {
        row.label = String(row.data.lookup);
        delete row.data.lookup;
      }
      expect(await use(s, code!)).to.equal(true);
      expect(await check(s, code!)).to.deep.equal({ ok: false, reason: 'used' });
    });

    it('a verification that is never committed leaves the code usable', async () => {
      const s = await setup();
      const [code] = await enroll(s);
      expect((await check(s, code!)).ok).to.equal(true);
      expect(await use(s, code!)).to.equal(true);
    });

    it('lets only one of two concurrent uses of a code commit', async () => {
      const s = await setup();
      const [code] = await enroll(s);
      const [a, b] = await Promise.all([check(s, code!), check(s, code!)]);
      expect(a!.ok && b!.ok).to.equal(true);
      const commits = await Promise.all([a, b].map((o) => (o as { commit: () => Promise<boolean> }).commit()));
      expect(commits).to.deep.equal([true, false]);
    });

    it('every code of the set works once, independently', async () => {
      const s = await setup({ ...CHEAP, count: 4 });
      const codes = await enroll(s);
      for (const code of codes) expect(await use(s, code)).to.equal(true);
      for (const code of codes) expect(await check(s, code)).to.deep.equal({ ok: false, reason: 'used' });
      expect(await enrolled(s)).to.equal(false);
    });

    it('accepts the code typed without dashes, in lower case, with spaces', async () => {
      const s = await setup({ ...CHEAP, count: 3 });
      const codes = await enroll(s);
      expect(await use(s, codes[0]!.replace(/-/g, ''))).to.equal(true);
      expect(await use(s, codes[1]!.toLowerCase())).to.equal(true);
      expect(await use(s, codes[2]!.replace(/-/g, ' '))).to.equal(true);
    });

    it('refuses a wrong code of the right shape, also one with a known lookup id', async () => {
      const s = await setup();
      const codes = await enroll(s);
      const plain = codes[0]!.replace(/-/g, '');
      const lastChar = plain.at(-1) === '0' ? '1' : '0';
      expect(await check(s, plain.slice(0, 11) + lastChar)).to.deep.equal({ ok: false, reason: 'mismatch' });
      const unknownId = ['ZZZZ', 'YYYY'].find((id) => !codes.some((c) => c.startsWith(id)))!;
      expect(await check(s, `${unknownId}-0000-0000`)).to.deep.equal({ ok: false, reason: 'mismatch' });
    });

    it('refuses malformed input', async () => {
      const s = await setup();
      const [code] = await enroll(s);
      for (const bad of ['', code!.slice(0, 13), code + '0', 'UUUU-UUUU-UUUU', 'ABCD_EFGH_JKMN', '123456']) {
        expect(await check(s, bad), bad).to.deep.equal({ ok: false, reason: 'malformed' });
      }
    });

    it('reports not_enrolled for a user without codes', async () => {
      const s = await setup();
      expect(await check(s, 'ABCD-EFGH-JKMN')).to.deep.equal({ ok: false, reason: 'not_enrolled' });
    });

    it('checks codes of this user only', async () => {
      const s = await setup();
      const [code] = await enroll(s);
      const other = { ...s, user: fakeUser({ username: 'bob' }) };
      expect(await check(other, code!)).to.deep.equal({ ok: false, reason: 'not_enrolled' });
    });

    it('runs one hash check also when no code has the lookup id, against a hash of the same cost', async () => {
      const real = argon2Hashing().withCost({ memoryCost: 1024, timeCost: 2, parallelism: 1 });
      const checked: string[] = [];
      const spying: SecretHasher = { hash: real.hash, verify: (h, c) => (checked.push(h), real.verify(h, c)) };
      const method = await createBackupCodeMethod(plugin.options!.parse({ ...CHEAP, count: 2 }), spying);
      const s: Setup = { ...(await setup()), method, enrollment: method.enrollment! };
      const codes = await enroll(s);
      const unknownId = ['ZZZZ', 'YYYY'].find((id) => !codes.some((c) => c.startsWith(id)))!;
      await check(s, `${unknownId}-0000-0000`);
      const plain = codes[0]!.replace(/-/g, '');
      await check(s, plain.slice(0, 10) + (plain.endsWith('00') ? '11' : '00'));
      const params = (hash: string) => hash.split('$').slice(0, 4).join('$');
      expect(checked).to.have.length(2);
      expect(rows(s).map((r) => r.secret)).to.not.include(checked[0]);
      expect(rows(s).map((r) => r.secret)).to.include(checked[1]);
      expect(params(checked[0]!)).to.equal(params(checked[1]!));
    });
  });

  describe('code format', () => {
    it('normalises separators, case and Crockford look-alikes', () => {
      expect(normalizeCode('abcd-efgh-jkmn')).to.equal('ABCDEFGHJKMN');
      expect(normalizeCode(' AB CD EF GH JK MN ')).to.equal('ABCDEFGHJKMN');
      expect(normalizeCode('O0IL-1111-0000')).to.equal('001111110000');
      expect(normalizeCode('ABCD-EFGH-JKM')).to.equal(null);
      expect(normalizeCode('ABCD-EFGH-JKMU')).to.equal(null);
      expect(formatCode('ABCDEFGHJKMN')).to.equal('ABCD-EFGH-JKMN');
    });

    it('draws characters from the whole alphabet', async () => {
      const s = await setup({ ...CHEAP, count: 50 });
      const chars = new Set((await enroll(s)).join('').replace(/-/g, ''));
      expect(chars.size).to.be.greaterThan(28); // 600 draws from 32 symbols
    });
  });
});
