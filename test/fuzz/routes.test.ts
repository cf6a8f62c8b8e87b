/**
 * Fuzz every route family with what clients may send by mistake or malice: any content type,
 * compressed bodies (valid, truncated, mislabelled), random bytes, and cookie headers with
 * invalid names or hundreds of flow cookies. Whatever arrives, the answer is never a 5xx, and
 * the response headers stay bounded. FACE is loaded, so the routes that take files also get
 * multipart bodies, well-formed or not (cut short, bad boundaries, malformed part headers, past
 * the method's limits).
 */
import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import { expect } from 'chai';
import fc from 'fast-check';
import { ADMIN_TOKEN, WEB, basic, pkcePair, startServer, type OAuthServer } from '../oauth/support.js';

interface Route {
  family: string;
  method: 'GET' | 'POST';
  path: string;
}

const challenge = pkcePair().challenge;
const ROUTES: Route[] = [
  { family: 'verification (fast JSON)', method: 'POST', path: '/verification-srv/authentication/PASSWORD/initiation' },
  { family: 'verification (fast JSON)', method: 'POST', path: '/verification-srv/authentication/TOTP/verification' },
  { family: 'verification status', method: 'GET', path: '/verification-srv/verificationstatus/abc' },
  { family: 'login continuation', method: 'POST', path: '/login/continue' },
  { family: 'setup', method: 'POST', path: '/verification-actions-srv/setup/TOTP/initiation' },
  { family: 'setup', method: 'POST', path: '/verification-actions-srv/setup/PASSWORD/verification' },
  { family: 'admin', method: 'POST', path: '/admin/users' },
  { family: 'token (fast form)', method: 'POST', path: '/oauth/token' },
  { family: 'introspection', method: 'POST', path: '/token/introspect' },
  { family: 'revocation', method: 'POST', path: '/oauth2/revoke/' },
  { family: 'userinfo', method: 'POST', path: '/userinfo' },
  {
    family: 'authorize',
    method: 'GET',
    path: `/api/oauth2/authorize/?response_type=code&client_id=${WEB.id}&scope=openid&redirect_uri=${encodeURIComponent('https://web.example.test/cb')}&code_challenge=${challenge}&code_challenge_method=S256`,
  },
  { family: 'authorize resume', method: 'GET', path: '/api/oauth2/authorize/resume?request_id=x' },
  { family: 'consent', method: 'POST', path: '/login/consent' },
  { family: 'login page', method: 'GET', path: '/login?request_id=abc' },
  { family: 'end session', method: 'GET', path: '/session/end_session?id_token_hint=a.b.c&client_id=web' },
  { family: 'end session', method: 'POST', path: '/session/end_session' },
  { family: 'admin', method: 'GET', path: '/admin/users/nobody/sessions' },
  { family: 'discovery', method: 'GET', path: '/.well-known/openid-configuration' },
  { family: 'health', method: 'GET', path: '/health/ready' },
];

/** The routes that parse multipart bodies: a method that takes files (FACE), verified or set up. */
const MULTIPART_ROUTES: Route[] = [
  '/verification-srv/authentication/FACE/verification',
  '/verification-actions-srv/setup/FACE/initiation',
  '/verification-actions-srv/setup/FACE/scan',
  '/verification-actions-srv/setup/FACE/verification',
].map((path) => ({ family: 'multipart (FACE)', method: 'POST', path }));
ROUTES.push(...MULTIPART_ROUTES);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'multipart/form-data',
  'text/plain',
  'application/octet-stream',
  ';;;',
];
const ENCODINGS = [undefined, 'gzip', 'deflate', 'br', 'identity', 'x-gzip', 'gzip, deflate', 'compress', 'GZIP'];

const json = fc.json({ maxDepth: 2 });
const bodies = fc.oneof(
  fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b)),
  json.map((t) => Buffer.from(t)),
  json.map((t) => gzipSync(t)),
  json.map((t) => gzipSync(t).subarray(0, 12)), // truncated
  json.map((t) => deflateSync(t)),
  json.map((t) => brotliCompressSync(t)),
  fc.string({ maxLength: 200 }).map((t) => Buffer.from(t)),
  fc.constant(Buffer.from('--xyz\r\nContent-Disposition: form-data; name="photo"\r\n\r\n')),
);

const BOUNDARY = 'fuzz-boundary';
const partHeader = fc.oneof(
  fc.constantFrom(
    'Content-Disposition: form-data; name="sub"',
    'Content-Disposition: form-data; name="exchange_id"',
    'Content-Disposition: form-data; name="photo"; filename="f.jpg"\r\nContent-Type: image/jpeg',
    'Content-Disposition: form-data; name="photo"; filename="f.png"\r\nContent-Type: image/png',
    'Content-Disposition: form-data; name="photo"; filename="f.gif"\r\nContent-Type: image/gif',
    'Content-Disposition: form-data; name="other"; filename="x.bin"',
    'Content-Disposition: form-data; name="sub[0][a]"',
    'Content-Disposition: form-data',
    'Content-Disposition form-data; name="photo"',
    `Content-Disposition: form-data; name="${'n'.repeat(120)}"`,
  ),
  fc.stringMatching(/^[ -~]{0,60}$/),
);
const partValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((t) => Buffer.from(t)),
  fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
  fc.constant(Buffer.from([0xff, 0xd8, 0xff, 0xe0])), // a JPEG's first bytes
  fc.constant(Buffer.alloc(17_000, 0x61)), // past the field limit
);
const multipartType = fc.constantFrom(
  `multipart/form-data; boundary=${BOUNDARY}`,
  `multipart/form-data; boundary="${BOUNDARY}"`,
  'multipart/form-data; boundary=other',
  'multipart/form-data; boundary=',
  'multipart/form-data',
  `multipart/form-data; boundary=${BOUNDARY}; charset=utf-16`,
  `multipart/mixed; boundary=${BOUNDARY}`,
);
/** A multipart body and its Content-Type: parts, maybe 60 more fields, maybe unclosed or cut short. */
const multipartBodies = fc
  .record({
    type: multipartType,
    parts: fc.array(fc.tuple(partHeader, partValue), { maxLength: 5 }),
    extraFields: fc.constantFrom(0, 0, 0, 60),
    closed: fc.boolean(),
    cut: fc.option(fc.nat({ max: 1500 })),
  })
  .map(({ type, parts, extraFields, closed, cut }) => {
    const fields = Array.from({ length: extraFields }, (_, i): [string, Buffer] => [
      `Content-Disposition: form-data; name="f${i}"`,
      Buffer.from('v'),
    ]);
    const body = Buffer.concat([
      ...[...parts, ...fields].flatMap(([header, value]) => [
        Buffer.from(`--${BOUNDARY}\r\n${header}\r\n\r\n`),
        value,
        Buffer.from('\r\n'),
      ]),
      Buffer.from(closed ? `--${BOUNDARY}--\r\n` : ''),
    ]);
    return { type, body: cut === null ? body : body.subarray(0, cut) };
  });

const cookieName = fc.oneof(
  fc.constantFrom('gh_session', 'gh_flow_0123456789abcdef', 'gh_flow_a b', 'gh_flow_', 'gh_flow_\t', 'x'),
  fc.stringMatching(/^gh_flow_[ -:<-~]{0,20}$/),
  fc.stringMatching(/^[ -:<-~]{1,12}$/),
);
const cookies = fc.oneof(
  fc.constant(undefined),
  fc
    .array(fc.tuple(cookieName, fc.stringMatching(/^[ -:<-~]{0,16}$/)), { maxLength: 20 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('; ')),
  fc
    .integer({ min: 11, max: 300 })
    .map((n) => Array.from({ length: n }, (_, i) => `gh_flow_${i.toString(16).padStart(16, '0')}=v`).join('; ')),
);
const authorization = fc.constantFrom(
  undefined,
  `Bearer ${ADMIN_TOKEN}`,
  'Bearer nope',
  basic(WEB.id, WEB.secret),
  'Basic !!!',
);

describe('fuzz: every route family, bodies, encodings and cookies', function () {
  this.timeout(120_000);
  let server: OAuthServer;
  before(async () => {
    server = await startServer({
      plugins: [{ name: '@gatehouse-auth/devices-api' }, { name: '@gatehouse-auth/method-face' }],
    });
  });
  after(() => server.close());

  for (const family of [...new Set(ROUTES.map((r) => r.family))]) {
    it(`${family}: never a 5xx, bounded Set-Cookie`, async () => {
      const routes = ROUTES.filter((r) => r.family === family);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          fc.constantFrom(...CONTENT_TYPES),
          fc.constantFrom(...ENCODINGS),
          bodies,
          cookies,
          authorization,
          async (route, type, encoding, body, cookie, auth) => {
            const headers: Record<string, string> = { 'Content-Type': type };
            if (encoding) headers['Content-Encoding'] = encoding;
            if (cookie) headers.Cookie = cookie;
            if (auth) headers.Authorization = auth;
            const res = await fetch(server.url(route.path), {
              method: route.method,
              headers,
              redirect: 'manual',
              ...(route.method === 'POST' ? { body } : {}),
            });
            await res.arrayBuffer();
            const what = `${route.method} ${route.path} ${type} ${encoding ?? '-'} → ${res.status}`;
            expect(res.status, what).to.be.below(500);
            const setCookies = res.headers.getSetCookie();
            expect(setCookies.length, what).to.be.at.most(12);
            expect(setCookies.join('\n').length, what).to.be.below(4096);
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('multipart (FACE): multipart bodies, well-formed or not, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...MULTIPART_ROUTES),
        multipartBodies,
        authorization,
        async (route, { type, body }, auth) => {
          const headers: Record<string, string> = { 'Content-Type': type };
          if (auth) headers.Authorization = auth;
          const res = await fetch(server.url(route.path), { method: 'POST', headers, body });
          await res.arrayBuffer();
          expect(res.status, `${route.path} ${type} ${body.length} bytes → ${res.status}`).to.be.below(500);
        },
      ),
      { numRuns: 150 },
    );
  });
});
