import { z } from '@gatehouse-auth/core';
import { parseRange } from './address.js';

const entry = z.string().refine((value) => parseRange(value) !== null, {
  error: (issue) => `"${String(issue.input)}" is not an IP address or CIDR range`,
});

/** Options of @gatehouse-auth/fds-ip-list; every entry is checked at start-up. */
export const ipListOptions = z
  .strictObject({
    /** When not empty, only these addresses and ranges may authenticate. */
    allow: z.array(entry).default([]),
    /** These addresses and ranges are always denied, even if also allowed. */
    deny: z.array(entry).default([]),
  })
  .prefault({});

export type IpListOptions = z.output<typeof ipListOptions>;
