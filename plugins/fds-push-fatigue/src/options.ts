import { z } from '@gatehouse-auth/core';

/** The bundled methods an authenticator device completes (docs/devices.md). */
export const DEVICE_METHODS: readonly string[] = ['PUSH', 'PATTERN', 'TOUCHID', 'FACE'];

/** As the core checks method ids: upper case, e.g. PUSH. */
const methodId = z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be an upper-case method id such as PUSH');

/** Options of @gatehouse-auth/fds-push-fatigue; every key has a default. */
export const pushFatigueOptions = z
  .strictObject({
    /**
     * The methods the rule caps: those that send a push to the user's device. An FDS rule cannot
     * tell a device method from its context, so a third-party device method must be listed here.
     */
    methods: z
      .array(methodId)
      .min(1)
      .max(32)
      .default(() => [...DEVICE_METHODS]),
    /** A user who already had this many pushes in the window gets no more until the oldest leaves it. */
    max_pushes: z.number().int().min(1).max(100).default(5),
    /** Length of the sliding window for `max_pushes`. */
    window_seconds: z.number().int().min(60).max(86_400).default(600),
    /** This many denials (on the device, or a wrong number) within `block_seconds` block pushes. */
    max_denials: z.number().int().min(1).max(20).default(2),
    /** Length of the sliding window for `max_denials`: how long a denial counts towards a block. */
    block_seconds: z.number().int().min(60).max(86_400).default(1800),
  })
  .prefault({});

export type PushFatigueOptions = z.output<typeof pushFatigueOptions>;
