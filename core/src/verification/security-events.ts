import type { Logger } from 'pino';
import type { SecurityEvent, SecurityEventListener } from '@gatehouse-auth/plugin-api';
import { PHANTOM_USER_ID } from './context.js';

/**
 * Hands security events to the plugins' listeners in the background: the request that caused
 * one never waits for them nor fails with them. The phantom user of an unknown identifier is
 * nobody's: nothing is told of it.
 */
export class SecurityEvents {
  private readonly listeners: { plugin: string; listener: SecurityEventListener }[] = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  listen(plugin: string, listener: SecurityEventListener): void {
    this.listeners.push({ plugin, listener });
  }

  /** Whether anyone listens: an event that costs queries to describe is skipped otherwise. */
  get heard(): boolean {
    return this.listeners.length > 0;
  }

  /** Tells every listener (an event, or its description still to be read); returns at once. */
  emit(event: SecurityEvent | (() => Promise<SecurityEvent>)): void {
    if (!this.heard) return;
    const work = (async () => {
      const told = typeof event === 'function' ? await event() : event;
      if (told.user.id === PHANTOM_USER_ID) return;
      await Promise.all(
        this.listeners.map(async ({ plugin, listener }) => {
          try {
            await listener(told);
          } catch (err) {
            this.logger.error({ err, plugin, event: told.type }, 'a security event listener failed');
          }
        }),
      );
    })().catch((err: unknown) => this.logger.error({ err }, 'a security event could not be described'));
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Waits for the listeners still at work (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
