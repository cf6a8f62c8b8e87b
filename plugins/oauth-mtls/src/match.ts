import type { X509Certificate } from 'node:crypto';

/** An app's expected certificate (RFC 8705 §2.1.2): exactly one of these metadata. */
export interface ExpectedCertificate {
  tls_client_auth_subject_dn?: string | undefined;
  tls_client_auth_san_dns?: string | undefined;
  tls_client_auth_san_uri?: string | undefined;
  tls_client_auth_san_ip?: string | undefined;
  tls_client_auth_san_email?: string | undefined;
}

export const EXPECTATIONS = [
  'tls_client_auth_subject_dn',
  'tls_client_auth_san_dns',
  'tls_client_auth_san_uri',
  'tls_client_auth_san_ip',
  'tls_client_auth_san_email',
] as const;

/**
 * Whether `certificate` is the one the app expects: true, or why not. The subject DN is compared
 * RDN by RDN in RFC 4514 order (most specific first, as `openssl x509 -nameopt RFC2253` and
 * nginx's `$ssl_client_s_dn` print it), attribute types case-insensitively; SANs exactly (DNS
 * names case-insensitively, IP addresses as addresses).
 */
export function matches(certificate: X509Certificate, expected: ExpectedCertificate): true | string {
  const given = EXPECTATIONS.filter((key) => expected[key] !== undefined);
  if (given.length !== 1)
    return `the app names ${given.length} of ${EXPECTATIONS.join(', ')}; tls_client_auth needs one`;
  const key = given[0]!;
  const want = expected[key]!;
  const ok = (() => {
    switch (key) {
      case 'tls_client_auth_subject_dn':
        return sameDn(parseDn(want), certificate.subject.split('\n').reverse().map(parseRdn));
      case 'tls_client_auth_san_dns':
        return sans(certificate, 'DNS').some((v) => v.toLowerCase() === want.toLowerCase());
      case 'tls_client_auth_san_uri':
        return sans(certificate, 'URI').includes(want);
      case 'tls_client_auth_san_ip':
        return certificate.checkIP(want) !== undefined;
      case 'tls_client_auth_san_email':
        return sans(certificate, 'email').includes(want);
    }
  })();
  return ok || `the client certificate does not match ${key}`;
}

/** The certificate's subjectAltName entries of one kind (Node quotes values with commas as JSON strings). */
function sans(certificate: X509Certificate, kind: 'DNS' | 'URI' | 'email'): string[] {
  const out: string[] = [];
  const entry = /(DNS|URI|IP Address|email|othername|DirName|Registered ID):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;
  for (const m of (certificate.subjectAltName ?? '').matchAll(entry)) {
    if (m[1] !== kind) continue;
    const raw = m[2]!;
    out.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
  }
  return out;
}

type Rdn = [type: string, value: string];

/** An RFC 4514 DN string: RDNs split at unescaped commas. */
export function parseDn(dn: string): Rdn[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i]!;
    if (c === '\\' && i + 1 < dn.length) {
      current += c + dn[++i];
    } else if (c === ',') {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts.map((p) => parseRdn(p.trim()));
}

function parseRdn(rdn: string): Rdn {
  const eq = rdn.indexOf('=');
  if (eq < 0) return ['', rdn];
  return [rdn.slice(0, eq).trim().toLowerCase(), unescape(rdn.slice(eq + 1).trim())];
}

/** RFC 4514 §2.4 escapes: `\,` and friends, and `\XX` hex pairs (UTF-8). */
function unescape(value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && /^[0-9a-fA-F]{2}$/.test(value.slice(i + 1, i + 3))) {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '\\' && i + 1 < value.length) {
      bytes.push(...Buffer.from(value[++i]!, 'utf8'));
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

const sameDn = (a: Rdn[], b: Rdn[]): boolean =>
  a.length === b.length && a.every(([type, value], i) => type === b[i]![0] && value === b[i]![1]);
