import { z } from '@gatehouse-auth/core';

/** The message kinds a delivery channel can carry. */
export const MESSAGE_KINDS = ['sms', 'email', 'voice', 'push'] as const;

/** Options of `@gatehouse-auth/channel-outbox`. */
export const outboxOptions = z
  .strictObject({
    /** Channel id that methods name to deliver through this outbox. */
    id: z.string().min(1).default('outbox'),
    kinds: z
      .array(z.enum(MESSAGE_KINDS))
      .min(1)
      .default([...MESSAGE_KINDS]),
    /** How long a stored message stays readable. */
    ttl_seconds: z.number().int().positive().default(86_400),
    /** Mounts GET /dev/outbox/latest, which shows codes: development only. */
    expose_route: z.boolean().default(false),
  })
  .prefault({});

export type OutboxOptions = z.output<typeof outboxOptions>;
