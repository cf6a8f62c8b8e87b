import { isIP } from 'node:net';

export type IpFamily = 'ipv4' | 'ipv6';

/** An address in the form BlockList expects, with its family. */
export interface ParsedAddress {
  address: string;
  family: IpFamily;
}

/** An address plus a prefix length (the full length for a single address). */
export interface ParsedRange extends ParsedAddress {
  prefix: number;
}

/** IPv4-mapped IPv6 (::ffff:0:0/96) as the WHATWG URL parser writes it: two hex groups. */
const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * Parses an IP address. IPv6 is canonicalised (lower case, compressed); an IPv4-mapped IPv6
 * address (::ffff:1.2.3.4, also written ::ffff:102:304) becomes the plain IPv4 address, so a
 * dual-stack socket cannot slip past an IPv4 entry. Returns null for anything else, including
 * IPv6 zone ids.
 */
export function parseAddress(text: string): ParsedAddress | null {
  const version = isIP(text);
  if (version === 4) return { address: text, family: 'ipv4' };
  if (version !== 6) return null;
  const canonical = canonicalIpv6(text);
  if (canonical === null) return null;
  const mapped = MAPPED_IPV4.exec(canonical);
  if (mapped) {
    const high = Number.parseInt(mapped[1]!, 16);
    const low = Number.parseInt(mapped[2]!, 16);
    return { address: [high >> 8, high & 255, low >> 8, low & 255].join('.'), family: 'ipv4' };
  }
  return { address: canonical, family: 'ipv6' };
}

/**
 * Parses a list entry: an address or `address/prefix`. A mapped IPv6 range (::ffff:10.0.0.0/104)
 * becomes the IPv4 range (10.0.0.0/8); one shorter than /96 would reach beyond the mapped block
 * and is refused. Host bits below the prefix are ignored, as BlockList ignores them.
 */
export function parseRange(entry: string): ParsedRange | null {
  const slash = entry.indexOf('/');
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const parsed = parseAddress(addressText);
  if (!parsed) return null;
  const writtenAsIpv6 = isIP(addressText) === 6;
  const bits = writtenAsIpv6 ? 128 : 32;
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (prefix > bits) return null;
  }
  if (writtenAsIpv6 && parsed.family === 'ipv4') {
    if (prefix < 96) return null;
    prefix -= 96;
  }
  return { ...parsed, prefix };
}

function canonicalIpv6(text: string): string | null {
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}
