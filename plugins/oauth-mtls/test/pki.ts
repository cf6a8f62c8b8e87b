/**
 * A test PKI made by the openssl CLI (node:crypto cannot create X.509 certificates): a CA, a
 * server certificate for the proxy, client certificates signed by the CA, and a self-signed one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Issued {
  cert: string;
  key: string;
}

export interface Pki {
  ca: Issued;
  /** The proxy's certificate, for 127.0.0.1. */
  server: Issued;
  /** Signs a client certificate with the CA (`subject` in openssl's `/C=…/O=…/CN=…` form). */
  client(subject: string, san?: string): Issued;
  /** A certificate signed by itself, not by the CA. */
  selfSigned(subject: string): Issued;
  remove(): void;
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-mtls-'));
  let serial = 0;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const files = (name: string) => ({ key: join(dir, `${name}-key.pem`), cert: join(dir, `${name}-cert.pem`) });
  const read = (f: { key: string; cert: string }): Issued => ({
    cert: readFileSync(f.cert, 'utf8'),
    key: readFileSync(f.key, 'utf8'),
  });
  const newKey = (f: { key: string }) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', f.key);

  const caFiles = files('ca');
  newKey(caFiles);
  openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    caFiles.key,
    '-out',
    caFiles.cert,
    '-subj',
    '/CN=Gatehouse Test CA',
    '-days',
    '1',
  );

  const signed = (subject: string, san: string | undefined, usage: string): Issued => {
    const name = `leaf${++serial}`;
    const f = files(name);
    newKey(f);
    const csr = join(dir, `${name}.csr`);
    openssl('req', '-new', '-utf8', '-key', f.key, '-out', csr, '-subj', subject);
    const ext = join(dir, `${name}.ext`);
    writeFileSync(ext, `extendedKeyUsage=${usage}\n${san ? `subjectAltName=${san}\n` : ''}`);
    openssl(
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caFiles.cert,
      '-CAkey',
      caFiles.key,
      '-set_serial',
      String(1000 + serial),
      '-out',
      f.cert,
      '-days',
      '1',
      '-extfile',
      ext,
    );
    return read(f);
  };

  return {
    ca: read(caFiles),
    server: signed('/CN=127.0.0.1', 'IP:127.0.0.1', 'serverAuth'),
    client: (subject, san) => signed(subject, san, 'clientAuth'),
    selfSigned(subject) {
      const f = files(`self${++serial}`);
      newKey(f);
      openssl('req', '-x509', '-new', '-key', f.key, '-out', f.cert, '-subj', subject, '-days', '1');
      return read(f);
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
