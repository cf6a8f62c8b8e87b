import { z } from '@gatehouse-auth/core';

const action = z.enum(['allow', 'step_up', 'deny']);

/** Options of @gatehouse-auth/fds-new-context; every key has a default. */
export const newContextOptions = z
  .strictObject({
    /** The verdict each signal asks for; the strictest among the signals present wins. */
    verdicts: z
      .strictObject({
        new_device: action.default('step_up'),
        new_network: action.default('allow'),
        new_language: action.default('allow'),
        unusual_hour: action.default('step_up'),
      })
      .prefault({}),
    /** How many of the user's latest successful verifications to compare with. */
    history_size: z.number().int().min(1).max(1000).default(50),
    /** Fewer successes than this and there is nothing to compare with: no signals. */
    min_history: z.number().int().min(1).default(3),
    /** Hours (on a 24-hour clock) from every past success beyond which the hour is unusual. */
    unusual_hour_distance: z.number().int().min(0).max(12).default(5),
  })
  .superRefine((options, ctx) => {
    // Otherwise the rule could never see enough history and would silently never fire.
    if (options.min_history > options.history_size) {
      ctx.addIssue({
        code: 'custom',
        path: ['min_history'],
        message: `must be at most history_size (${options.history_size})`,
      });
    }
  })
  .prefault({});

export type NewContextOptions = z.output<typeof newContextOptions>;
export type SignalName = keyof NewContextOptions['verdicts'];
