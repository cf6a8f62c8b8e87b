import { timingSafeEqual } from 'node:crypto';
import type { Services } from '@gatehouse-auth/core';

export interface Nonces {
  /** The nonce of the current time slot (what `DPoP-Nonce` answers). */
  current(): string;
  /** A nonce of this slot or the previous one, made with this server's key. */
  accepts(nonce: string): boolean;
}

/**
 * Server nonces (RFC 9449 §8) without state: a nonce is a time slot and the MAC of it under the
 * server's key (`services.secrets.mac`), so every node makes and accepts the same ones, and they
 * rotate every `lifetime` seconds. One from the previous slot is still taken, so a nonce handed
 * out at the end of a slot works for at least `lifetime` seconds.
 */
export function statelessNonces(services: Pick<Services, 'clock' | 'secrets'>, lifetime: number): Nonces {
  const slotNow = () => Math.floor(services.clock.now().getTime() / 1000 / lifetime);
  const make = (slot: number) => `${slot.toString(36)}.${services.secrets.mac(`dpop-nonce:${slot}`)}`;
  return {
    current: () => make(slotNow()),
    accepts(nonce) {
      const slot = parseInt(nonce.split('.')[0] ?? '', 36);
      const now = slotNow();
      if (slot !== now && slot !== now - 1) return false;
      const expected = Buffer.from(make(slot));
      const given = Buffer.from(nonce);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
