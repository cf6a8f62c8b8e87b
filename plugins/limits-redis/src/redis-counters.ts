import type { PluginApi, SharedCounters } from '@gatehouse-auth/core';
import { Redis } from 'ioredis';

/**
 * Shared counters in Redis: SET NX PX starts a window at a key's first hit, INCR counts, PTTL
 * says when it ends — one round trip, atomic in MULTI. While Redis does not answer (refused, or
 * silent past `timeoutMs`), hits are let through (the limits guard against floods, not against
 * login guessing, which the database's attempt budgets bound) and a warning is logged once a
 * minute. The keys come hashed from the core.
 */
export class RedisCounters implements SharedCounters {
  private readonly redis: Redis;
  private lastWarning = 0;

  constructor(
    url: string,
    private readonly logger: PluginApi['logger'],
    timeoutMs = 300,
  ) {
    // Fail fast while Redis is away (no waiting for reconnection) or silent (a partition: the
    // command times out), so no request waits on the limit longer than `timeoutMs`.
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: false,
      commandTimeout: timeoutMs,
      // A hit that timed out was let through: counting it after a reconnect would count it late.
      autoResendUnfulfilledCommands: false,
      connectTimeout: Math.max(timeoutMs, 1000),
    });
    this.redis.on('error', () => undefined); // reported by the commands that fail
  }

  async hit(key: string, windowMs: number): Promise<{ count: number; resetsAt: number }> {
    try {
      return await this.count(`gatehouse:${key}`, windowMs);
    } catch (err) {
      if (Date.now() - this.lastWarning > 60_000) {
        this.lastWarning = Date.now();
        this.logger.warn({ err }, 'redis does not answer: shared limits are not enforced until it does');
      }
      return { count: 0, resetsAt: Date.now() };
    }
  }

  private async count(k: string, windowMs: number): Promise<{ count: number; resetsAt: number }> {
    const replies = await this.redis.multi().set(k, '0', 'PX', Math.max(1, windowMs), 'NX').incr(k).pttl(k).exec();
    const failed = replies?.find(([err]) => err);
    if (!replies || failed) throw failed?.[0] ?? new Error('redis: the transaction was aborted');
    const count = Number(replies[1]![1]);
    const ttl = Number(replies[2]![1]);
    return { count, resetsAt: Date.now() + Math.max(0, ttl) };
  }

  ping(): Promise<unknown> {
    return this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
