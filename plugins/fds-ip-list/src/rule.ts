import { BlockList } from 'node:net';
import type { FdsContext, FdsRule, FdsVerdict } from '@gatehouse-auth/core';
import { parseAddress, parseRange } from './address.js';
import type { IpListOptions } from './options.js';

/** The rule id, also the prefix of its reasons. */
export const IP_LIST_RULE_ID = 'ip_list';

/** A BlockList of the entries; they were validated with the options, so a bad one is a fault. */
export function buildList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const range = parseRange(entry);
    if (!range) throw new Error(`not an IP address or CIDR range: "${entry}"`);
    const fullLength = range.family === 'ipv4' ? 32 : 128;
    if (range.prefix === fullLength) list.addAddress(range.address, range.family);
    else list.addSubnet(range.address, range.prefix, range.family);
  }
  return list;
}

/**
 * Denies request addresses on the deny list, and, when the allow list is not empty, any address
 * not on it. An address that does not parse is denied: the rule fails closed.
 */
export function ipListRule(options: IpListOptions): FdsRule {
  const deny = buildList(options.deny);
  const allow = buildList(options.allow);
  const allowListed = options.allow.length > 0;
  return {
    id: IP_LIST_RULE_ID,
    // A session used from a listed address, or a new context, must not sign in unchecked.
    checksSessions: true,
    async evaluate(ctx: FdsContext): Promise<FdsVerdict> {
      const ip = parseAddress(ctx.request.ip);
      if (!ip) return { action: 'deny', reason: `${IP_LIST_RULE_ID}.bad_ip` };
      if (deny.check(ip.address, ip.family)) return { action: 'deny', reason: `${IP_LIST_RULE_ID}.denied` };
      if (allowListed && !allow.check(ip.address, ip.family)) {
        return { action: 'deny', reason: `${IP_LIST_RULE_ID}.not_allowed` };
      }
      return { action: 'allow' };
    },
  };
}
