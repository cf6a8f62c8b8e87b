import { z } from '@gatehouse-auth/core';

/** Options of `@gatehouse-auth/notices-security` (the `notifications:` section of before). */
export const noticeOptions = z
  .strictObject({
    /** Delivery channel id for notices by email (users with an address). */
    email_channel: z.string().min(1).optional(),
    /** Delivery channel id for notices by SMS (users with a phone and no email route). */
    sms_channel: z.string().min(1).optional(),
    /** At most one notice of a kind per user in this many seconds. */
    min_interval_seconds: z.number().int().min(0).default(900),
  })
  // Loaded without a channel the plugin would tell nobody anything.
  .refine((o) => o.email_channel || o.sms_channel, 'needs email_channel or sms_channel (or both)');

export type NoticeOptions = z.output<typeof noticeOptions>;
