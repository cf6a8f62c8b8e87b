import { expect } from 'chai';
import type { AuthMethod, EnrollmentHandlers, ImportOutcome } from '@gatehouse-auth/core';
import { fakeServices, fakeUser, importContext, registerWithFakes, verifyContext } from '@gatehouse-auth/testing';
import plugin from '../src/index.js';
import { bcryptDigest, bcryptVerify } from '../src/bcrypt.js';
import { parseImported } from '../src/imported.js';

const CHEAP = { memory_cost: 1024, time_cost: 2, parallelism: 1 };
const METHOD = 'PASSWORD';

/**
 * Known-good vectors. Where a standard publishes one it is used (OpenWall's crypt_blowfish
 * "U*U", RFC 7914 §12 scrypt, RFC 6070 PBKDF2-SHA1, Firebase's own README); the rest were made
 * with the systems' algorithms outside this code (Python's libxcrypt bcrypt and hashlib
 * PBKDF2/scrypt, node-argon2).
 */
const VECTORS: { name: string; input: Record<string, unknown>; password: string; kind: string }[] = [
  {
    name: 'bcrypt $2a$ (OpenWall test vector)',
    input: { hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW' },
    password: 'U*U',
    kind: 'bcrypt',
  },
  {
    name: 'bcrypt $2b$ (Auth0 export, libxcrypt)',
    input: { hash: '$2b$05$abcdefghijklmnopqrstuujyowYzwa5GTkdJQ1hID4j4yIozDs7U.' },
    password: 'Tr0ub4dor&3',
    kind: 'bcrypt',
  },
  {
    name: 'bcrypt $2y$ (PHP, libxcrypt)',
    input: { hash: '$2y$05$zyxwvutsrqponmlkjihgfeZayZZKDQ.WT9tkxQhp8YpqLhLoJelUK' },
    password: 'Tr0ub4dor&3',
    kind: 'bcrypt',
  },
  {
    name: 'bcrypt of a UTF-8 password, in Auth0’s bulk-import shape',
    input: { algorithm: 'bcrypt', hash: { value: '$2b$04$0123456789ABCDEFGHIJKub1ugOfMyiyFg0BTLsJDU9mv7iifIBbi' } },
    password: 'pässwörd',
    kind: 'bcrypt',
  },
  {
    name: 'argon2id PHC string (Keycloak 24+, node-argon2)',
    input: { hash: '$argon2id$v=19$m=7168,p=1,t=5$a2V5Y2xvYWstc2FsdC0xNg$vDxBYQz8RgITtBqxNQyud/edIPsNaGB6vwL/FgbWYec' },
    password: 'argon-pass',
    kind: 'argon2',
  },
  {
    name: 'argon2i PHC string',
    input: { hash: '$argon2i$v=19$m=4096,p=1,t=3$YW5vdGhlci1zYWx0LTEyMw$Ih5pT8D+dozjmFmT6Rx+rWT2dMkv/tdsK52g7GqXo/0' },
    password: 'argon-pass',
    kind: 'argon2',
  },
  {
    name: 'Keycloak argon2 credential (parameters in credentialData)',
    input: {
      credentialData: JSON.stringify({
        hashIterations: 5,
        algorithm: 'argon2',
        additionalParameters: {
          hashLength: ['32'],
          memory: ['7168'],
          type: ['id'],
          version: ['1.3'],
          parallelism: ['1'],
        },
      }),
      secretData: JSON.stringify({
        value: 'vDxBYQz8RgITtBqxNQyud/edIPsNaGB6vwL/FgbWYec=',
        salt: Buffer.from('keycloak-salt-16').toString('base64'),
        additionalParameters: {},
      }),
    },
    password: 'argon-pass',
    kind: 'argon2',
  },
  {
    name: 'Keycloak pbkdf2-sha256 credential (27,500 iterations, 512-bit key)',
    input: {
      credentialData: '{"hashIterations":27500,"algorithm":"pbkdf2-sha256","additionalParameters":{}}',
      secretData:
        '{"value":"cbyUqmr6bKcoGdH7uPLPiqPAsWQba/pzFKMUD8pXPItgZn3SXSbFrcduzqrRmKsFi6dvC3e5ywg+AreSmJTqAw==","salt":"AAECAwQFBgcICQoLDA0ODw==","additionalParameters":{}}',
    },
    password: 'keycloak-pass',
    kind: 'pbkdf2',
  },
  {
    name: 'Keycloak pbkdf2-sha512 credential, as objects',
    input: {
      credentialData: { hashIterations: 27500, algorithm: 'pbkdf2-sha512' },
      secretData: {
        value: 'hJ16DAvciLYkdRQQUBqrW6SwUzo5N/ywpd4B7Bw7UhQf1hTKMdfQpOW5s11jmqUT45ySOuTGyiuIkBygdoJU7w==',
        salt: 'AAECAwQFBgcICQoLDA0ODw==',
      },
    },
    password: 'keycloak-pass',
    kind: 'pbkdf2',
  },
  {
    name: 'Keycloak pbkdf2 (SHA-1) credential: RFC 6070 vector (c=4096)',
    input: {
      credentialData: { hashIterations: 4096, algorithm: 'pbkdf2' },
      secretData: {
        value: Buffer.from('4b007901b765489abead49d926f721d065a429c1', 'hex').toString('base64'),
        salt: 'c2FsdA==',
      },
    },
    password: 'password',
    kind: 'pbkdf2',
  },
  {
    name: 'PBKDF2 PHC string (Auth0 custom_password_hash)',
    input: { hash: '$pbkdf2-sha256$i=100000,l=32$c2FsdHNhbHRzYWx0MTIzNA$f9QksUIyZC1k5QHsJ1gsbsjAhajTk0ZCenkZT9ym85Q' },
    password: 'auth0-pass',
    kind: 'pbkdf2',
  },
  {
    name: 'scrypt PHC string',
    input: { hash: '$scrypt$ln=14,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$K9+7QagE/dR3WldfdoIcMNywx+ntO/Acfb/KyBxzdZw' },
    password: 'scrypt-pass',
    kind: 'scrypt',
  },
  {
    name: 'scrypt: RFC 7914 §12 vector (N=1024, r=8, p=16)',
    input: {
      hash: `$scrypt$ln=10,r=8,p=16$${Buffer.from('NaCl').toString('base64')}$${Buffer.from(
        'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
        'hex',
      ).toString('base64')}`,
    },
    password: 'password',
    kind: 'scrypt',
  },
  {
    name: 'Firebase scrypt (the vector of github.com/firebase/scrypt)',
    input: {
      algorithm: 'SCRYPT',
      hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      salt: '42xEC+ixf3L2lw==',
      signer_key: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
      salt_separator: 'Bw==',
      rounds: 8,
      mem_cost: 14,
    },
    password: 'user1password',
    kind: 'firebase-scrypt',
  },
];

async function setup() {
  const services = fakeServices();
  const { methods } = await registerWithFakes(plugin, CHEAP, services);
  const method = methods[0] as AuthMethod;
  const user = fakeUser();
  return { services, method, user, enrollment: method.enrollment as EnrollmentHandlers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** Imports `input` for the user and stores what the method made of it, as the import command does. */
async function importFor(s: Setup, input: unknown): Promise<ImportOutcome> {
  const outcome = await s.enrollment.import!(input, importContext({ username: s.user.username }));
  if (outcome.ok) for (const c of outcome.credentials) await s.services.credentials(s.user.id, METHOD).add(c);
  return outcome;
}

function check(s: Setup, password: string) {
  return s.method.verify(verifyContext({ services: s.services, user: s.user, method: METHOD, fields: { password } }));
}

function stored(s: Setup) {
  return s.services.credentialRows.rows.filter((c) => c.userId === s.user.id && c.method === METHOD);
}

describe('@gatehouse-auth/method-password: imported hashes', function () {
  this.timeout(60_000);

  for (const vector of VECTORS) {
    it(`${vector.name}: the right password signs in and is rehashed to argon2id; a wrong one fails`, async () => {
      const s = await setup();
      const outcome = await importFor(s, vector.input);
      expect(outcome.ok, JSON.stringify(outcome)).to.equal(true);
      expect(stored(s)[0]!.data).to.deep.equal({ imported: vector.kind });

      expect(await check(s, `${vector.password}x`)).to.deep.equal({ ok: false, reason: 'mismatch' });
      expect(await check(s, '')).to.deep.equal({ ok: false, reason: 'mismatch' });

      const out = await check(s, vector.password);
      expect(out.ok).to.equal(true);
      const commit = (out as { commit?: () => Promise<boolean> }).commit;
      expect(commit, 'an imported hash is always rehashed').to.be.a('function');
      expect(await commit!()).to.equal(true);
      const [after] = stored(s);
      expect(after!.secret).to.match(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
      expect(after!.data).to.deep.equal({});
      expect(await check(s, vector.password)).to.deep.equal({ ok: true }); // nothing left to rehash
      expect(await check(s, `${vector.password}x`)).to.deep.equal({ ok: false, reason: 'mismatch' });
    });
  }

  it('bcrypt reads only the first 72 bytes of a password, as every bcrypt does', async () => {
    const salt = new Uint8Array(16).fill(7);
    const long = 'a'.repeat(72);
    expect(Buffer.from(await bcryptDigest(long, 4, salt))).to.deep.equal(
      Buffer.from(await bcryptDigest(`${long}tail`, 4, salt)),
    );
    expect(Buffer.from(await bcryptDigest(long.slice(1), 4, salt))).to.not.deep.equal(
      Buffer.from(await bcryptDigest(long, 4, salt)),
    );
  });

  it('bcrypt of cost 10 (libxcrypt) leaves the event loop free between slices of its work', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      const hash = '$2b$10$abcdefghijklmnopqrstuu23JPZtHcGhwXSF41f93o/7vBdDut3Xu';
      expect(await bcryptVerify(hash, 'correct horse')).to.equal(true);
      expect(ticks, 'timers ran while it worked').to.be.greaterThan(10);
      expect(await bcryptVerify(hash, 'correct horsE')).to.equal(false);
    } finally {
      clearInterval(timer);
    }
  });

  it('refuses what it cannot check, saying why', () => {
    const refused: [unknown, RegExp][] = [
      ['$2b$10$abc', /must be an object/],
      [{}, /needs "hash"/],
      [{ hash: 'md5:5f4dcc3b5aa765d61d8327deb882cf99' }, /unknown hash format/],
      [{ hash: '$2b$10$abcdefghijklmnopqrstuu23JPZtHcGhwXSF41f93o/7vBdDut3X' }, /not a bcrypt hash/],
      [{ hash: '$2b$15$abcdefghijklmnopqrstuu23JPZtHcGhwXSF41f93o/7vBdDut3Xu' }, /bcrypt cost 15 is outside 4-14/],
      [{ hash: '$scrypt$ln=21,r=8,p=1$MDEy$K9+7QagE/dR3WldfdoIcMNywx+ntO/Acfb/KyBxzdZw' }, /not a scrypt PHC string/],
      [{ hash: '$scrypt$ln=18,r=16,p=1$MDEy$K9+7QagE/dR3WldfdoIcMNywx+ntO/Acfb/KyBxzdZw' }, /more than 256 MiB/],
      [{ hash: '$pbkdf2-md5$i=1000$c2FsdA$K9+7QagE/dR3WldfdoIcMNywx+ntO/Acfb/KyBxzdZw' }, /not a PBKDF2 string/],
      [{ hash: '$pbkdf2-sha256$i=10$c2FsdA$K9+7QagE/dR3WldfdoIcMNywx+ntO/Acfb/KyBxzdZw' }, /iterations must be 1000-/],
      [{ credentialData: '{not json', secretData: '{}' }, /must be JSON objects/],
      [
        { credentialData: { algorithm: 'md5' }, secretData: { value: 'aGFzaA==', salt: 'c2FsdA==' } },
        /Keycloak algorithm "md5" is not imported/,
      ],
      [{ algorithm: 'SCRYPT', hash: 'aGFzaA==', salt: 'c2FsdA==' }, /Firebase scrypt needs base64/],
      [
        {
          algorithm: 'scrypt',
          hash: 'aGFzaA==',
          salt: 'c2FsdA==',
          signer_key: 'a2V5',
          salt_separator: 'Bw==',
          rounds: 8,
        },
        /needs "rounds" \(1-32\) and "mem_cost"/,
      ],
    ];
    for (const [input, message] of refused) {
      const out = parseImported(input);
      expect(out.ok, JSON.stringify(input)).to.equal(false);
      expect((out as { message: string }).message, JSON.stringify(input)).to.match(message);
    }
  });

  it('a refused import stores nothing', async () => {
    const s = await setup();
    const out = await importFor(s, { hash: '{SSHA}abc' });
    expect(out).to.deep.equal({
      ok: false,
      message: 'unknown hash format (argon2, bcrypt, scrypt and PBKDF2 are imported)',
    });
    expect(stored(s)).to.have.length(0);
  });

  it('keeps an enrolled argon2id hash of the configured cost as it is (only imported ones always rehash)', async () => {
    const s = await setup();
    await s.enrollment.initiate({
      ...verifyContext({ services: s.services, user: s.user, method: METHOD, fields: {} }),
      body: { password: 'correct horse battery staple' },
      pending: null,
    });
    expect(await check(s, 'correct horse battery staple')).to.deep.equal({ ok: true });
  });
});
