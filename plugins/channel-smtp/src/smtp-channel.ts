import type { DeliveryChannel } from '@gatehouse-auth/core';
import nodemailer from 'nodemailer';
import { BARE_ADDRESS, type SmtpOptions } from './options.js';
import { smtpDeliveryError } from './smtp-error.js';

/** Subject used when the method gave none. */
export const DEFAULT_SUBJECT = 'Your verification code';

/** A pooled nodemailer transport built from the plugin options. */
export function createSmtpTransport(options: SmtpOptions) {
  return nodemailer.createTransport({
    pool: true,
    host: options.host,
    port: options.port,
    secure: options.secure,
    requireTLS: options.require_tls,
    ...(options.auth ? { auth: { user: options.auth.user, pass: options.auth.pass } } : {}),
    tls: { rejectUnauthorized: options.tls_reject_unauthorized },
    connectionTimeout: options.timeout_ms,
    greetingTimeout: options.timeout_ms,
    socketTimeout: options.timeout_ms,
    logger: false,
    debug: false,
  });
}

export type SmtpTransport = ReturnType<typeof createSmtpTransport>;

/** An email channel over one SMTP transport, created once and shared by all sends. */
export function smtpChannel(options: SmtpOptions, transport: SmtpTransport): DeliveryChannel {
  const id = options.id;
  return {
    id,
    kinds: ['email'],
    async send(message) {
      if (message.kind !== 'email') throw new Error(`smtp channel "${id}" sends email only, not ${message.kind}`);
      // One bare address only: a list or a display name here would widen who gets the code.
      if (!BARE_ADDRESS.test(message.to))
        throw new Error(`smtp channel "${id}": the recipient is not one email address`);
      let info: Awaited<ReturnType<SmtpTransport['sendMail']>>;
      try {
        info = await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject ?? DEFAULT_SUBJECT,
          text: message.text,
          // The mail's language, for screen readers and translation prompts (RFC 3282).
          ...(message.locale ? { headers: { 'Content-Language': message.locale } } : {}),
        });
      } catch (err) {
        throw smtpDeliveryError(id, err, options.auth);
      }
      if (info.rejected.length > 0 || info.accepted.length === 0) {
        throw new Error(`smtp channel "${id}" could not send: the server refused the recipient`);
      }
    },
  };
}
