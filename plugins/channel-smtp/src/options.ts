import { z } from '@gatehouse-auth/core';

/** A bare address (`a@b.example`): no spaces, commas or angle brackets, so never two recipients. */
export const BARE_ADDRESS = /^[^\s@,;<>"()]+@[^\s@,;<>"()]+$/;
/** A display name with an address: `Gatehouse <no-reply@example.com>`. */
const NAMED_ADDRESS = /^[^\r\n<>]*<[^\s@,;<>"()]+@[^\s@,;<>"()]+>$/;

/** Options of `@gatehouse-auth/channel-smtp`. */
export const smtpOptions = z.strictObject({
  /** Channel id that methods name to deliver through this server. */
  id: z.string().min(1).default('smtp'),
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(587),
  /** TLS from the first byte (port 465); otherwise STARTTLS is used when the server offers it. */
  secure: z.boolean().default(false),
  /** Refuse to send unless the server upgrades the connection with STARTTLS. */
  require_tls: z.boolean().default(false),
  auth: z.strictObject({ user: z.string().min(1), pass: z.string().min(1) }).optional(),
  /** Sender: `no-reply@example.com` or `Example <no-reply@example.com>`. */
  from: z
    .string()
    .refine(
      (v) => BARE_ADDRESS.test(v) || NAMED_ADDRESS.test(v),
      'must be an email address, optionally "Name <address>"',
    ),
  /** Verify the server's certificate; turn off only for a test server with a self-signed one. */
  tls_reject_unauthorized: z.boolean().default(true),
  /** Connection, greeting and socket inactivity timeout. */
  timeout_ms: z.number().int().positive().default(10_000),
});

export type SmtpOptions = z.output<typeof smtpOptions>;
