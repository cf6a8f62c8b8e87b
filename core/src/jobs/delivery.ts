import { scrubbed, type JsonObject, type OutboundMessage } from '@gatehouse-auth/plugin-api';
import type { JobHandler } from './queue.js';

/** A message handed to the background: where, what, and what may never reach a log. */
export interface QueuedDelivery {
  channel: string;
  message: OutboundMessage;
  /** Strings to blank out of a provider's error (the code a message carries). */
  secrets?: string[];
  /** Who and what the message is about, for the outcome event. */
  about?: { userId?: string | null; method?: string | null; clientId?: string | null; key?: string | null };
}

export const DELIVERY_JOB = 'delivery';

/** Sends one queued message; a failure (scrubbed) asks the queue for a retry. */
export async function sendQueued(
  deliver: (channel: string, message: OutboundMessage) => Promise<void>,
  job: QueuedDelivery,
): Promise<void> {
  try {
    await deliver(job.channel, job.message);
  } catch (err) {
    throw scrubbed(err, job.secrets);
  }
}

/** The job handler for queued messages: outcome events `delivery.done` / `delivery.failed`. */
export function deliveryJob(deliver: (channel: string, message: OutboundMessage) => Promise<void>): JobHandler {
  return {
    kind: DELIVERY_JOB,
    maxAttempts: 4,
    run: (payload) => sendQueued(deliver, payload as unknown as QueuedDelivery),
    describe: (payload) => {
      const job = payload as unknown as QueuedDelivery;
      return { ...(job.about ?? {}), data: { channel: job.channel, kind: job.message?.kind ?? null } };
    },
  };
}

export function toPayload(job: QueuedDelivery): JsonObject {
  return job as unknown as JsonObject;
}
