import { definePlugin } from '@gatehouse-auth/core';
import { ipListOptions, type IpListOptions } from './options.js';
import { ipListRule } from './rule.js';

export { ipListOptions, type IpListOptions } from './options.js';
export { ipListRule, buildList, IP_LIST_RULE_ID } from './rule.js';
export { parseAddress, parseRange, type ParsedAddress, type ParsedRange, type IpFamily } from './address.js';

/**
 * @gatehouse-auth/fds-ip-list: allow and deny lists of IPv4/IPv6 addresses and CIDR ranges.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/fds-ip-list'
 *     options: { allow: ['10.0.0.0/8', '2001:db8::/32'], deny: ['10.66.0.0/16'] }
 */
export default definePlugin<IpListOptions>({
  name: '@gatehouse-auth/fds-ip-list',
  apiVersion: '^1',
  options: ipListOptions,
  register(api, options) {
    api.fdsRules.add(ipListRule(options));
  },
});
