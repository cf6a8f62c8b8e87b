import { expect } from 'chai';
import type { AuthMethod, EnrollmentHandlers, ImportOutcome, VerifyOutcome } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, importContext, registerWithFakes, verifyContext } from '@gatehouse-auth/testing';
import plugin from '../src/index.js';

const METHOD = 'TOTP';
/** RFC 6238 Appendix B seeds (ASCII), and the first in base32. */
const SEED_SHA1 = '12345678901234567890';
const SEED_SHA256 = '12345678901234567890123456789012';
const SEED_SHA512 = '1234567890123456789012345678901234567890123456789012345678901234';
const RFC_SEED = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

async function setup(options: Record<string, unknown> = {}) {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, options, services);
  const method = methods[0] as AuthMethod;
  return { services, method, user: fakeUser(), enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function importFor(s: Setup, input: unknown): Promise<ImportOutcome> {
  const outcome = await s.enrollment.import!(input, importContext({ username: s.user.username }));
  if (outcome.ok) for (const c of outcome.credentials) await s.services.credentials(s.user.id, METHOD).add(c);
  return outcome;
}

async function signIn(s: Setup, seconds: number, code: string): Promise<VerifyOutcome | boolean> {
  s.services.clock.set(new Date(seconds * 1000));
  const out = await s.method.verify(
    verifyContext({ services: s.services, user: s.user, method: METHOD, fields: { pass_code: code } }),
  );
  return out.ok ? out.commit!() : out;
}

const rows = (s: Setup) => s.services.credentialRows.rows.filter((c) => c.userId === s.user.id && c.method === METHOD);

describe('@gatehouse-auth/method-totp: imported seeds', () => {
  it('imports a base32 seed sealed like an enrolled one, which then signs in once per step (RFC 6238, T=59)', async () => {
    const s = await setup();
    expect(await importFor(s, { secret: 'gezd gnbv gy3t qojq gezd gnbv gy3t qojq' })).to.include({ ok: true });
    const [row] = rows(s);
    expect(row!.secret).to.not.include(RFC_SEED);
    expect(s.services.secrets.decrypt(row!.secret!)).to.equal(RFC_SEED);
    expect(row!.data).to.deep.equal({ imported: true });
    expect(await signIn(s, 59, '287083')).to.deep.equal({ ok: false, reason: 'mismatch' });
    expect(await signIn(s, 59, '287082')).to.equal(true);
    expect(await signIn(s, 59, '287082')).to.deep.include({ ok: false, reason: 'replay' });
  });

  it('keeps an imported seed’s own digits and algorithm (RFC 6238 SHA-256 and SHA-512 vectors, 8 digits)', async () => {
    const sha256 = await setup();
    expect(
      await importFor(sha256, { secret: SEED_SHA256, encoding: 'raw', digits: 8, algorithm: 'HmacSHA256' }),
    ).to.include({ ok: true });
    expect(rows(sha256)[0]!.data).to.deep.equal({ imported: true, digits: 8, algorithm: 'sha256' });
    expect(await signIn(sha256, 59, '46119246')).to.equal(true);
    expect(await signIn(sha256, 1111111109, '68084774')).to.equal(true);
    expect(await signIn(sha256, 1234567890, '91819425')).to.deep.equal({ ok: false, reason: 'mismatch' });
    expect(await signIn(sha256, 1234567890, '91819424')).to.equal(true);
    // The method's own 6 digits do not apply to this seed.
    expect(await signIn(sha256, 2000000000, '90698825'.slice(2))).to.deep.equal({ ok: false, reason: 'malformed' });
    expect(await signIn(sha256, 2000000000, '90698825')).to.equal(true);

    const sha512 = await setup();
    expect(
      await importFor(sha512, { secret: SEED_SHA512, encoding: 'raw', digits: 8, algorithm: 'SHA512' }),
    ).to.include({ ok: true });
    expect(await signIn(sha512, 59, '90693936')).to.equal(true);
    expect(await signIn(sha512, 1111111111, '99943326')).to.equal(true);
  });

  it('keeps an imported seed’s own period (60 s)', async () => {
    const s = await setup();
    expect(await importFor(s, { secret: RFC_SEED, period: 60 })).to.include({ ok: true });
    // T=100 with a 60-s step is counter 1, whose RFC 4226 code is 287082; a 30-s app shows counter 3's.
    expect(await signIn(s, 100, '969429')).to.deep.equal({ ok: false, reason: 'mismatch' });
    expect(await signIn(s, 100, '287082')).to.equal(true);
    expect(rows(s)[0]!.counter).to.equal(1);
  });

  it('Keycloak’s raw secretData value is base32-encoded as its QR code had it', async () => {
    const s = await setup();
    expect(await importFor(s, { secret: SEED_SHA1, encoding: 'raw' })).to.include({ ok: true });
    expect(s.services.secrets.decrypt(rows(s)[0]!.secret!)).to.equal(RFC_SEED);
  });

  it('refuses a bad seed or option, saying why, and stores nothing', async () => {
    const s = await setup();
    const refused: [unknown, string][] = [
      ['GEZDGNBV', 'must be an object'],
      [{}, 'needs "secret" (the base32 seed)'],
      [{ secret: 'not-base32!' }, 'secret is not base32 (A-Z, 2-7)'],
      [{ secret: 'GEZDGNBVGY3TQOJ' }, 'secret is shorter than 80 bits (16 base32 characters)'],
      [{ secret: RFC_SEED, encoding: 'hex' }, 'encoding must be "base32" or "raw"'],
      [{ secret: RFC_SEED, digits: 10 }, 'digits must be 6, 7 or 8'],
      [{ secret: RFC_SEED, period: 5 }, 'period must be 10-300 seconds'],
      [{ secret: RFC_SEED, algorithm: 'MD5' }, 'algorithm must be SHA1, SHA256 or SHA512'],
    ];
    for (const [input, message] of refused) {
      expect(await importFor(s, input), JSON.stringify(input)).to.deep.equal({ ok: false, message });
    }
    expect(rows(s)).to.have.length(0);
  });
});
