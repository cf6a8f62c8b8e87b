/**
 * Issue 8: a body declared far past the limit is refused from its Content-Length at once (the
 * connection closes, nothing is read), and clients that send headers or a body too slowly are
 * cut off by the header and request timeouts.
 */
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { buildApp, createLogger, listen, type RunningServer } from '@gatehouse-auth/core';
import { testConfig, VERIFICATION_API } from '../support/config.js';

/** Opens a socket, runs `talk`, and resolves with everything the server sent until it closed. */
function converse(port: number, talk: (socket: net.Socket) => void): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    socket.on('error', (err) => (text ? resolve({ text, ms: Date.now() - started }) : reject(err)));
    socket.on('connect', () => talk(socket));
  });
}

describe('slow and oversized requests', function () {
  this.timeout(20_000);
  let running: RunningServer;
  let port: number;

  before(async () => {
    // The verification API's routes (decision 78) are among those measured.
    const config = testConfig([VERIFICATION_API], {
      server: { host: '127.0.0.1', port: 0, headers_timeout_ms: 600, request_timeout_ms: 1200 },
    });
    const gatehouse = await buildApp(config, { logger: createLogger('silent') });
    running = await listen(gatehouse);
    port = running.port;
  });
  after(() => running.shutdown());

  for (const [what, path, type] of [
    [
      'the fast JSON route (verification)',
      '/verification-srv/authentication/PASSWORD/verification',
      'application/json',
    ],
    ['the fast form route (token)', '/oauth/token', 'application/x-www-form-urlencoded'],
    ['an express JSON route (continuation)', '/login/continue', 'application/json'],
  ] as const) {
    it(`${what}: a declared 100 MB body → 413 at once, and the connection closes`, async () => {
      const { text, ms } = await converse(port, (socket) => {
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"a":`,
        );
      });
      expect(text).to.match(/^HTTP\/1\.1 413 /);
      // Answered from the header, not after a timeout.
      expect(ms).to.be.below(500);
    });
  }

  it('headers sent one byte at a time past headers_timeout_ms → 408 and closed', async () => {
    const { text, ms } = await converse(port, (socket) => {
      const request = 'GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(100);
      let i = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || i >= request.length) return clearInterval(timer);
        socket.write(request[i++]!);
      }, 50);
      socket.on('close', () => clearInterval(timer));
    });
    expect(text).to.match(/^HTTP\/1\.1 408 /);
    expect(ms).to.be.within(500, 4000);
  });

  it('a body at one byte per 100 ms past request_timeout_ms → 408 and closed', async () => {
    const { text, ms } = await converse(port, (socket) => {
      socket.write(
        'POST /login/continue HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
      );
      const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(' ')), 100);
      socket.on('close', () => clearInterval(timer));
    });
    expect(text).to.match(/^HTTP\/1\.1 408 /);
    expect(ms).to.be.within(1000, 5000);
  });

  for (const [what, body] of [
    ['a valid gzip body', gzipSync('{"request_id":"x"}')],
    ['a malformed gzip body', gzipSync('{"request_id":"x"}').subarray(0, 10)],
  ] as const) {
    for (const path of ['/verification-srv/authentication/PASSWORD/initiation', '/login/continue']) {
      it(`${what} at ${path} → 415 UNSUPPORTED_MEDIA_TYPE`, async () => {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
          body,
        });
        expect(res.status).to.equal(415);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      });
    }
  }

  it('a gzip body at the token endpoint → 400 invalid_request', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'gzip' },
      body: gzipSync('grant_type=client_credentials'),
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: string }).error).to.equal('invalid_request');
  });

  it('a normal request is not affected', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect(res.status).to.equal(200);
  });
});
