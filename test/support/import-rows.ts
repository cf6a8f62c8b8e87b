/**
 * Rows for `gatehouse users import` tests: one password hash of each kind the PASSWORD method
 * imports, as the systems export them, with the password it was made of, and a TOTP seed.
 * The hashes are the vectors of plugins/method-password/test/imported.test.ts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { peerBusFor, TEST_ENCRYPTION_KEY } from './config.js';

export interface HashKind {
  kind: string;
  password: string;
  credential: Record<string, unknown>;
}

export const HASH_KINDS: HashKind[] = [
  {
    kind: 'argon2',
    password: 'argon-pass',
    credential: {
      hash: '$argon2id$v=19$m=7168,p=1,t=5$a2V5Y2xvYWstc2FsdC0xNg$vDxBYQz8RgITtBqxNQyud/edIPsNaGB6vwL/FgbWYec',
    },
  },
  {
    kind: 'bcrypt',
    password: 'Tr0ub4dor&3',
    credential: { hash: '$2b$05$abcdefghijklmnopqrstuujyowYzwa5GTkdJQ1hID4j4yIozDs7U.' },
  },
  {
    kind: 'scrypt',
    password: 'scrypt-pass',
    credential: { hash: '$scrypt$ln=14,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$K9+7QagE/dR3WldfdoIcMNywx+ntO/Acfb/KyBxzdZw' },
  },
  {
    kind: 'firebase-scrypt',
    password: 'user1password',
    credential: {
      algorithm: 'SCRYPT',
      hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      salt: '42xEC+ixf3L2lw==',
      signer_key: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
      salt_separator: 'Bw==',
      rounds: 8,
      mem_cost: 14,
    },
  },
  {
    kind: 'pbkdf2',
    password: 'keycloak-pass',
    credential: {
      credentialData: '{"hashIterations":27500,"algorithm":"pbkdf2-sha256","additionalParameters":{}}',
      secretData:
        '{"value":"cbyUqmr6bKcoGdH7uPLPiqPAsWQba/pzFKMUD8pXPItgZn3SXSbFrcduzqrRmKsFi6dvC3e5ywg+AreSmJTqAw==","salt":"AAECAwQFBgcICQoLDA0ODw==","additionalParameters":{}}',
    },
  },
];

/** RFC 6238's seed "12345678901234567890" in base32. */
export const TOTP_SEED = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

/** Argon2id of the PASSWORD method in the import tests (cheap, as the other tests use). */
export const LOW_COST = { memory_cost: 1024, time_cost: 2 };

/**
 * A config file for the CLI in `dir`: this database, the import command's plugin, the PASSWORD
 * and TOTP methods, the tests' encryption key (the verification app of
 * test/verification/support.ts seals with the same).
 */
export function importConfigFile(dir: string, databaseUrl: string): string {
  const file = path.join(dir, 'gatehouse.yaml');
  const config = {
    database: { url: databaseUrl },
    log: { level: 'warn' },
    secrets: { encryption_key: TEST_ENCRYPTION_KEY },
    maintenance: { purge_interval_seconds: 0 },
    plugins: [
      // The command itself (decision 64).
      { name: '@gatehouse-auth/user-import' },
      { name: '@gatehouse-auth/management' },
      { name: '@gatehouse-auth/method-password', options: LOW_COST },
      { name: '@gatehouse-auth/method-totp' },
      // A method without an import hook: rows with its credentials are refused.
      { name: '@gatehouse-auth/method-backupcode', options: LOW_COST },
      ...peerBusFor(databaseUrl),
    ],
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** JSON lines of `rows`. */
export function jsonLines(rows: unknown[]): string {
  return rows.map((row) => (typeof row === 'string' ? row : JSON.stringify(row))).join('\n') + '\n';
}
