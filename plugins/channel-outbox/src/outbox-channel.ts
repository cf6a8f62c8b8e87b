import type {
  DeliveryChannel,
  JsonObject,
  MessageKind,
  OutboundMessage,
  RecordStore,
  Services,
} from '@gatehouse-auth/core';

/** Key prefix of every message stored for `to`; `records.list(prefix)` returns them newest first. */
export function outboxPrefix(to: string): string {
  return `msg:${to}:`;
}

/**
 * Unique, time-ordered key: zero-padded epoch milliseconds, then random bytes so two messages
 * in the same millisecond never replace each other.
 */
function messageKey(services: Services, to: string): string {
  const millis = String(services.clock.now().getTime()).padStart(15, '0');
  return `${outboxPrefix(to)}${millis}-${services.crypto.randomToken(8)}`;
}

/** What the outbox keeps per message. */
export interface StoredMessage extends JsonObject {
  kind: MessageKind;
  to: string;
  subject: string | null;
  text: string;
  data: JsonObject | null;
  sent_at: string;
}

function toStored(message: OutboundMessage, sentAt: Date): StoredMessage {
  return {
    kind: message.kind,
    to: message.to,
    subject: message.subject ?? null,
    text: message.text,
    data: message.data ?? null,
    sent_at: sentAt.toISOString(),
  };
}

/** A channel that "delivers" by storing the message in the plugin's records. */
export function outboxChannel(input: {
  id: string;
  kinds: MessageKind[];
  ttlSeconds: number;
  records: RecordStore;
  services: Services;
}): DeliveryChannel {
  const { records, services, ttlSeconds } = input;
  return {
    id: input.id,
    kinds: [...input.kinds],
    async send(message) {
      if (!input.kinds.includes(message.kind))
        throw new Error(`outbox channel "${input.id}" does not take ${message.kind}`);
      const stored = toStored(message, services.clock.now());
      await records.put(messageKey(services, message.to), stored, { ttlSeconds });
    },
  };
}

/**
 * The newest live message stored for exactly `to`. The prefix alone could also match an address
 * that merely starts with `to:`, so the stored `to` is compared too.
 */
export async function latestMessage(records: RecordStore, to: string): Promise<StoredMessage | null> {
  const candidates = await records.list(outboxPrefix(to), { limit: 100 });
  const found = candidates.find((record) => record.data.to === to);
  return found ? (found.data as StoredMessage) : null;
}
