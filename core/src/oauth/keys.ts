import type { Clock, SigningAlg } from '@gatehouse-auth/plugin-api';
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { num, type Sql } from '../storage/sql.js';
import type { SecretBox } from '../util/crypto.js';
import type { JwtSigner } from './jws.js';

interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: string;
  private_sealed: string;
  state: 'next' | 'active' | 'retired';
  activated_at: unknown;
  publish_until: unknown;
}

/** How long a signer choice is cached: rotation is seen by every node within this time. */
const CACHE_MS = 5_000;

/**
 * Signing keys, one set per configured algorithm (`oauth.signing_algs`): generated on first
 * use, private halves encrypted at rest, public halves in the JWKS. Rotation publishes the next
 * key of every algorithm first and signs with it only from its activation time; the old key
 * stays published until every token it signed has expired.
 */
export class KeyStore {
  private readonly cached = new Map<string, { signer: JwtSigner; until: number }>();
  private readonly imported = new Map<string, JwtSigner['key']>();
  private readonly ensured = new Set<string>();

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    /** The algorithms to keep keys for; the first is the default. */
    private readonly algs: readonly SigningAlg[] = ['ES256'],
  ) {}

  /** Makes sure a key of `alg` can sign (first use). Safe to run on several nodes at once. */
  async ensureKey(alg: SigningAlg = this.algs[0]!): Promise<void> {
    if (this.ensured.has(alg)) return;
    const row = await this.sql.one<{ n: unknown }>(
      `SELECT COUNT(*) AS n FROM signing_keys WHERE state <> 'retired' AND alg = :alg`,
      { alg },
    );
    if (num(row?.n ?? 0) === 0) await this.insert(alg, 'active', this.clock.now().getTime());
    this.ensured.add(alg);
  }

  /**
   * Publishes a new key that starts signing after `activationDelaySeconds` (so relying parties
   * can fetch it first); the current keys stay published `maxTokenLifetimeSeconds` after that.
   */
  async rotate(
    activationDelaySeconds: number,
    maxTokenLifetimeSeconds: number,
  ): Promise<{ kid: string; alg: SigningAlg; activatesAt: Date }[]> {
    const activatesAt = this.clock.now().getTime() + activationDelaySeconds * 1000;
    const published = [];
    for (const alg of this.algs) {
      const kid = await this.insert(alg, 'next', activatesAt);
      await this.sql.exec(
        `UPDATE signing_keys SET publish_until = :until
         WHERE kid <> :kid AND alg = :alg AND state <> 'retired' AND publish_until IS NULL`,
        { kid, alg, until: activatesAt + maxTokenLifetimeSeconds * 1000 },
      );
      published.push({ kid, alg, activatesAt: new Date(activatesAt) });
    }
    this.cached.clear();
    return published;
  }

  /** The key of `alg` to sign with now: the newest one whose activation time has come. */
  async signer(alg: SigningAlg = this.algs[0]!): Promise<JwtSigner> {
    const now = this.clock.now().getTime();
    const hit = this.cached.get(alg);
    if (hit && hit.until > now) return hit.signer;
    // The time is read per query: a key generated just now must count as active.
    const current = () =>
      this.sql.one<KeyRow>(
        `SELECT * FROM signing_keys WHERE state <> 'retired' AND alg = :alg AND activated_at <= :now
         ORDER BY activated_at DESC LIMIT 1`,
        { alg, now: this.clock.now().getTime() },
      );
    let row = await current();
    if (!row) {
      // First use of this algorithm on this database: generate its first key.
      await this.ensureKey(alg);
      row = await current();
    }
    if (!row) throw new Error(`no active ${alg} signing key (run gatehouse keys rotate)`);
    let key = this.imported.get(row.kid);
    if (!key) {
      key = createPrivateKey({ key: JSON.parse(this.box.decrypt(row.private_sealed)) as JsonWebKey, format: 'jwk' });
      this.imported.set(row.kid, key);
    }
    const signer = { kid: row.kid, alg: row.alg, key };
    this.cached.set(alg, { signer, until: now + CACHE_MS });
    return signer;
  }

  /** Public keys to publish: every key not retired past its publication window. */
  async jwks(): Promise<{ keys: JWK[] }> {
    for (const alg of this.algs) await this.ensureKey(alg);
    const now = this.clock.now().getTime();
    const rows = await this.sql.select<KeyRow>(
      `SELECT * FROM signing_keys WHERE state <> 'retired' AND (publish_until IS NULL OR publish_until > :now)
       ORDER BY activated_at DESC`,
      { now },
    );
    return { keys: rows.map((r) => JSON.parse(r.public_jwk) as JWK) };
  }

  private async insert(alg: SigningAlg, state: 'next' | 'active', activatedAt: number): Promise<string> {
    // RSA keys of 2048 bits (RFC 7518 §3.3 minimum); EdDSA as Ed25519.
    const { publicKey, privateKey } = await generateKeyPair(alg, {
      extractable: true,
      ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
    });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const published: JWK = { ...publicJwk, kid, alg, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg };
    await this.sql.exec(
      `INSERT INTO signing_keys (kid, alg, public_jwk, private_sealed, state, created_at, activated_at, retired_at, publish_until)
       VALUES (:kid, :alg, :pub, :priv, :state, :now, :activatedAt, NULL, NULL)`,
      {
        kid,
        alg,
        pub: JSON.stringify(published),
        priv: this.box.encrypt(JSON.stringify(privateJwk)),
        state,
        now: this.clock.now().getTime(),
        activatedAt,
      },
    );
    return kid;
  }
}
