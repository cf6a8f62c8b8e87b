import { isIP } from 'node:net';
import Bowser from 'bowser';

/** Real user agents are a few hundred characters; parsing more only costs time. */
const MAX_USER_AGENT = 1024;

/**
 * What identifies a device: the client's device id when it sends one (`id:...`), otherwise the
 * browser family, OS name and platform type (`ua:chrome|linux|desktop`). Versions are left out,
 * so a browser or OS upgrade is not a new device.
 */
export function deviceKey(facts: { userAgent?: string | null; deviceId?: string | null }): string {
  if (facts.deviceId) return `id:${facts.deviceId}`;
  const userAgent = facts.userAgent?.trim().slice(0, MAX_USER_AGENT);
  if (!userAgent) return 'ua:unknown';
  const parsed = Bowser.parse(userAgent);
  const parts = [parsed.browser.name, parsed.os.name, parsed.platform.type];
  return `ua:${parts.map((part) => (part ?? '').toLowerCase()).join('|')}`;
}

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The network an address belongs to: its IPv4 /24 or IPv6 /48 (`203.0.113.0/24`,
 * `2001:db8:1::/48`). IPv4-mapped IPv6 counts as IPv4. Null when `ip` is not an address.
 */
export function networkPrefix(ip: string): string | null {
  const version = isIP(ip);
  if (version === 4) return `${ip.split('.').slice(0, 3).join('.')}.0/24`;
  if (version !== 6) return null;
  let canonical: string;
  try {
    // The URL parser canonicalises IPv6: lower case, '::' compression, dotted IPv4 as hex.
    canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = MAPPED_IPV4.exec(canonical);
  if (mapped) {
    const high = Number.parseInt(mapped[1]!, 16);
    return `${high >> 8}.${high & 255}.${Number.parseInt(mapped[2]!, 16) >> 8}.0/24`;
  }
  return `${expandIpv6(canonical).slice(0, 3).join(':')}::/48`;
}

/** The eight groups of a canonical IPv6 address, with '::' written out as zero groups. */
function expandIpv6(canonical: string): string[] {
  const [head = '', tail] = canonical.split('::');
  const front = splitGroups(head);
  if (tail === undefined) return front;
  const back = splitGroups(tail);
  return [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
}

function splitGroups(text: string): string[] {
  return text === '' ? [] : text.split(':');
}

/** Primary subtag of the first Accept-Language entry, lower case: 'en-US,en;q=0.9' → 'en'. */
export function primaryLanguage(acceptLanguage: string | null | undefined): string | null {
  const first = (acceptLanguage ?? '').split(',')[0]!.split(';')[0]!.trim();
  const primary = first.split('-')[0]!.toLowerCase();
  return /^(?:[a-z]{1,8}|\*)$/.test(primary) ? primary : null;
}

/** Distance between two hours of the day on a 24-hour clock face: 23 and 1 are 2 apart. */
export function hourDistance(a: number, b: number): number {
  const d = (((a - b) % 24) + 24) % 24;
  return Math.min(d, 24 - d);
}
