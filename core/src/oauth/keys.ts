import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Clock } from '../services.js';
import { num, type Sql } from '../storage/sql.js';
import type { SecretBox } from '../util/crypto.js';

export const SIGNING_ALG = 'ES256';

interface KeyRow {
  kid: string;
  alg: string;
  public_jwk: string;
  private_sealed: string;
  state: 'next' | 'active' | 'retired';
  activated_at: unknown;
  publish_until: unknown;
}

export interface Signer {
  kid: string;
  alg: string;
  /** The private key, for node:crypto's synchronous signing (see signJwt). */
  key: KeyObject;
}

/** How long a signer choice is cached: rotation is seen by every node within this time. */
const CACHE_MS = 5_000;

/**
 * Signing keys: generated on first start, private halves encrypted at rest, public halves in
 * the JWKS. Rotation publishes the next key first and signs with it only from its activation
 * time; the old key stays published until every token it signed has expired.
 */
export class KeyStore {
  private cached: { signer: Signer; until: number } | null = null;
  private readonly imported = new Map<string, Signer['key']>();

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly box: SecretBox,
  ) {}

  private ensured = false;

  /** Makes sure some key can sign (first use). Safe to run on several nodes at once. */
  async ensureKey(): Promise<void> {
    if (this.ensured) return;
    const row = await this.sql.one<{ n: unknown }>(`SELECT COUNT(*) AS n FROM signing_keys WHERE state <> 'retired'`);
    if (num(row?.n ?? 0) === 0) await this.insert('active', this.clock.now().getTime());
    this.ensured = true;
  }

  /**
   * Publishes a new key that starts signing after `activationDelaySeconds` (so relying parties
   * can fetch it first); the current keys stay published `maxTokenLifetimeSeconds` after that.
   */
  async rotate(
    activationDelaySeconds: number,
    maxTokenLifetimeSeconds: number,
  ): Promise<{ kid: string; activatesAt: Date }> {
    const activatesAt = this.clock.now().getTime() + activationDelaySeconds * 1000;
    const kid = await this.insert('next', activatesAt);
    await this.sql.exec(
      `UPDATE signing_keys SET publish_until = :until WHERE kid <> :kid AND state <> 'retired' AND publish_until IS NULL`,
      { kid, until: activatesAt + maxTokenLifetimeSeconds * 1000 },
    );
    this.cached = null;
    return { kid, activatesAt: new Date(activatesAt) };
  }

  /** The key to sign with now: the newest one whose activation time has come. */
  async signer(): Promise<Signer> {
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.until > now) return this.cached.signer;
    // The time is read per query: a key generated just now must count as active.
    const current = () =>
      this.sql.one<KeyRow>(
        `SELECT * FROM signing_keys WHERE state <> 'retired' AND activated_at <= :now ORDER BY activated_at DESC LIMIT 1`,
        { now: this.clock.now().getTime() },
      );
    let row = await current();
    if (!row) {
      // First use on a new database: generate the first key.
      await this.ensureKey();
      row = await current();
    }
    if (!row) throw new Error('no active signing key (run gatehouse keys rotate)');
    let key = this.imported.get(row.kid);
    if (!key) {
      key = createPrivateKey({ key: JSON.parse(this.box.decrypt(row.private_sealed)) as JsonWebKey, format: 'jwk' });
      this.imported.set(row.kid, key);
    }
    const signer = { kid: row.kid, alg: row.alg, key };
    this.cached = { signer, until: now + CACHE_MS };
    return signer;
  }

  /** Public keys to publish: every key not retired past its publication window. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.ensureKey();
    const now = this.clock.now().getTime();
    const rows = await this.sql.select<KeyRow>(
      `SELECT * FROM signing_keys WHERE state <> 'retired' AND (publish_until IS NULL OR publish_until > :now)
       ORDER BY activated_at DESC`,
      { now },
    );
    return { keys: rows.map((r) => JSON.parse(r.public_jwk) as JWK) };
  }

  private async insert(state: 'next' | 'active', activatedAt: number): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const published: JWK = { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    await this.sql.exec(
      `INSERT INTO signing_keys (kid, alg, public_jwk, private_sealed, state, created_at, activated_at, retired_at, publish_until)
       VALUES (:kid, :alg, :pub, :priv, :state, :now, :activatedAt, NULL, NULL)`,
      {
        kid,
        alg: SIGNING_ALG,
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
