/**
 * @gatehouse-auth/notices-security — tells users of the core's security events
 * (`api.securityEvents`, plugin API 1.3) by email or SMS: a one-time code used again, a sign-in
 * blocked or challenged by the FDS rules, a new password with the ways to sign in set up since
 * the last sign-in. At most one notice of a kind per user and interval, on every node.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/notices-security'
 *     options:
 *       email_channel: smtp
 *       sms_channel: sms-provider
 */
import { definePlugin, type MessageKind, type UserRecord } from '@gatehouse-auth/core';
import { noticeOptions, type NoticeOptions } from './options.js';
import { SecurityNotifier } from './notifier.js';
import { SUBJECT } from './texts.js';

export { noticeOptions, type NoticeOptions } from './options.js';
export { SecurityNotifier } from './notifier.js';
export { SUBJECT, text, type NoticeFacts, type SecurityNotice } from './texts.js';

/**
 * The service `securityNotices` (`services.resolve('securityNotices')`): whether this plugin
 * tells `user` of a security event of `type` (it has a route to them), so that a plugin with a
 * notice of its own for the same change (account-recovery's reset) does not send a second one.
 */
export interface SecurityNotices {
  tells(type: string, user: Pick<UserRecord, 'email' | 'phone'>): boolean;
}
// Every event the plugin has a text for: `SUBJECT.en` is typed over the contract's event union.
const TOLD = new Set(Object.keys(SUBJECT.en!));

export default definePlugin<NoticeOptions>({
  name: '@gatehouse-auth/notices-security',
  apiVersion: '^1.3',
  options: noticeOptions,
  provides: ['securityNotices'],
  register(api, options) {
    const { services } = api;
    const notifier = new SecurityNotifier({
      options,
      channels: services.channels,
      events: services.events,
      history: services.history,
      clock: services.clock,
      logger: api.logger,
      claims: api.web.limit('notice', 1, options.min_interval_seconds),
    });
    api.securityEvents((event) => notifier.notify(event.user, event.type, event));
    const notices: SecurityNotices = {
      tells: (type, user) =>
        TOLD.has(type) && Boolean((options.email_channel && user.email) || (options.sms_channel && user.phone)),
    };
    api.provide('securityNotices', notices);

    api.check(() => {
      const need = (key: 'email_channel' | 'sms_channel', kind: MessageKind) => {
        const id = options[key];
        if (!id) return;
        const channel = services.channels.get(id);
        if (!channel) throw new Error(`options.${key}: no delivery channel "${id}" is registered`);
        if (!channel.kinds.includes(kind)) throw new Error(`options.${key}: channel "${id}" does not deliver ${kind}`);
      };
      need('email_channel', 'email');
      need('sms_channel', 'sms');
    });
  },
});
