import { z } from '@gatehouse-auth/core';

const count = () => z.number().int().min(1);

/** Options of @gatehouse-auth/fds-velocity; every key has a default. */
export const velocityOptions = z
  .strictObject({
    /** Length of the sliding window for the per-user, per-IP and per-factor counts. */
    window_seconds: count().default(900),
    /** More failures than this for one user in the window → deny. */
    max_failures_per_user: count().default(30),
    /** More failures than this from one IP address in the window → deny. */
    max_failures_per_ip: count().default(100),
    /** More failures than this for one user on one method in the window → deny. */
    max_failures_per_user_method: count().default(20),
    /** Consecutive failures on a factor before the growing back-off starts. */
    free_failures: z.number().int().min(0).default(5),
    /** Back-off after the first failure past `free_failures`; doubles with each further failure. */
    backoff_base_seconds: count().default(1),
    /** Ceiling of the back-off. */
    backoff_max_seconds: count().default(900),
    /**
     * Consecutive failures that lock a factor. NIST SP 800-63B §5.2.2 (rev 4 §3.2.2): the verifier
     * SHALL NOT allow more than 100 consecutive failed attempts on one authenticator, hence the cap.
     */
    lockout_failures: count().max(100).default(100),
  })
  .prefault({});

export type VelocityOptions = z.output<typeof velocityOptions>;
