import type { Clock, Invalidation, TokenInfo } from '@gatehouse-auth/plugin-api';

export type { Invalidation } from '@gatehouse-auth/plugin-api';

/**
 * Active access tokens by key, so that introspection and bearer checks skip the database in
 * the common case (docs/decisions/0029). Entries are dropped on every revocation that could
 * touch them, here and, through the revocation bus, on every other node; a `generation` that
 * moves on each invalidation keeps a read that raced a revocation from caching what it read.
 * Bounded: the oldest entry goes first (Map order), and no entry outlives `maxAgeMs`.
 */
export class ActiveTokenCache {
  private readonly entries = new Map<string, { info: TokenInfo; cachedAt: number }>();
  private gen = 0;
  /** Off while the bus cannot promise to deliver invalidations (a listener reconnecting). */
  private enabled = true;

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
    private readonly clock: Clock,
  ) {}

  /** False while the bus is disconnected from its peers. */
  get caching(): boolean {
    return this.enabled;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Read before the database read that may `set`. */
  get generation(): number {
    return this.gen;
  }

  /** A cached active token, still unexpired; null when not cached (look in the database). */
  get(key: string): TokenInfo | null {
    const hit = this.entries.get(key);
    if (!hit) return null;
    const now = this.clock.now().getTime();
    if (hit.info.token!.expiresAt.getTime() <= now || now - hit.cachedAt > this.maxAgeMs) {
      this.entries.delete(key);
      return null;
    }
    return hit.info;
  }

  /** Keeps an active access token read at `generation`, unless something was revoked since. */
  set(key: string, info: TokenInfo, generation: number): void {
    if (!this.enabled || generation !== this.gen || this.maxEntries === 0) return;
    if (!info.active || info.token?.kind !== 'access') return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { info, cachedAt: this.clock.now().getTime() });
  }

  invalidate(what: Invalidation): void {
    this.gen++;
    for (const key of what.keys ?? []) this.entries.delete(key);
    if (!what.grants?.length && !what.subjects?.length) return;
    const grants = new Set(what.grants);
    const subjects = new Set(what.subjects);
    for (const [key, { info }] of this.entries) {
      const t = info.token!;
      if (grants.has(t.grantId) || (t.subject !== null && subjects.has(t.subject))) this.entries.delete(key);
    }
  }

  /** Drops everything (what was revoked is not known). */
  clear(): void {
    this.gen++;
    this.entries.clear();
  }

  /** Drops everything and stops (or resumes) caching: the bus lost (or regained) its peers. */
  setEnabled(enabled: boolean): void {
    this.clear();
    this.enabled = enabled;
  }
}
