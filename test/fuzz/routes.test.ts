/**
 * Fuzz every route family with what clients may send by mistake or malice: any content type,
 * compressed bodies (valid, truncated, mislabelled), random bytes, and cookie headers with
 * invalid names or hundreds of flow cookies. Whatever arrives, the answer is never a 5xx, and
 * the response headers stay bounded.
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
  { family: 'login continuation', method: 'POST', path: '/login-srv/verification/login' },
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
    server = await startServer();
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
});
