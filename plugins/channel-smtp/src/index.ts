/**
 * @gatehouse-auth/channel-smtp — sends email messages (codes, notices) through an SMTP server with
 * nodemailer. `send` resolves once the server accepted the message and rejects otherwise.
 */
import { definePlugin } from '@gatehouse-auth/core';
import { smtpOptions, type SmtpOptions } from './options.js';
import { createSmtpTransport, smtpChannel } from './smtp-channel.js';

export { smtpOptions, type SmtpOptions } from './options.js';
export { smtpChannel, createSmtpTransport, DEFAULT_SUBJECT, type SmtpTransport } from './smtp-channel.js';

export default definePlugin<SmtpOptions>({
  name: '@gatehouse-auth/channel-smtp',
  apiVersion: '^1.1',
  options: smtpOptions,
  register(api, options) {
    const transport = createSmtpTransport(options);
    api.channels.add(smtpChannel(options, transport));
    // Connects, says EHLO, upgrades with STARTTLS and logs in as a send would; sends nothing.
    api.dependency(`smtp:${options.id}`, () => transport.verify());
    api.logger.info(
      {
        channel: options.id,
        host: options.host,
        port: options.port,
        secure: options.secure,
        auth: Boolean(options.auth),
      },
      'smtp channel ready',
    );
  },
});
