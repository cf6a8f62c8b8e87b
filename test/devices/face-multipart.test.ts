/**
 * Malformed multipart bodies to the routes that take files (FACE verification and the FACE
 * setup steps): each is the client's mistake, answered 400 INVALID_FIELD or, past a limit of the
 * method, 413 PAYLOAD_TOO_LARGE; never a 500, and nothing logged at error level. busboy reports
 * most of these as plain `Error`s, which used to reach the error handler as faults.
 */
import net from 'node:net';
import { once } from 'node:events';
import { expect } from 'chai';
import { createLogger } from '@gatehouse-auth/core';
import { LogCapture } from '../support/log-capture.js';
import { admin, startDemoServer, type DemoServer } from './support.js';

const BOUNDARY = 'gh-boundary';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const MIB = 1024 * 1024;
/** FACE's default max_photo_bytes. */
const MAX_PHOTO = 2 * MIB;

const field = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = (name: string, content: Buffer | string) =>
  Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="face.jpg"\r\n` +
        'Content-Type: image/jpeg\r\n\r\n',
    ),
    Buffer.from(content),
    Buffer.from('\r\n'),
  ]);
const end = `--${BOUNDARY}--\r\n`;
const body = (...parts: (Buffer | string)[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));

interface Shape {
  name: string;
  type: string;
  body: Buffer;
  expected: [number, string];
}

const INVALID: [number, string] = [400, 'INVALID_FIELD'];
const TOO_LARGE: [number, string] = [413, 'PAYLOAD_TOO_LARGE'];

const SHAPES: Shape[] = [
  {
    name: 'no boundary in the Content-Type',
    type: 'multipart/form-data',
    body: body(field('sub', 'x'), end),
    expected: INVALID,
  },
  {
    name: 'a body with another boundary than the header names',
    type: MULTIPART,
    body: body(field('sub', 'x').replaceAll(BOUNDARY, 'other'), '--other--\r\n'),
    expected: INVALID,
  },
  {
    name: 'an unexpected end of form (cut after a part header)',
    type: MULTIPART,
    body: body(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"\r\n\r\n`),
    expected: INVALID,
  },
  {
    name: 'a malformed part header',
    type: MULTIPART,
    body: body(`--${BOUNDARY}\r\nContent-Disposition form-data\r\n\r\nx\r\n`, end),
    expected: INVALID,
  },
  {
    name: 'a file part the method does not take',
    type: MULTIPART,
    body: body(file('document', 'x'), end),
    expected: INVALID,
  },
  {
    name: 'too many fields (past 50)',
    type: MULTIPART,
    body: body(...Array.from({ length: 51 }, (_, i) => field(`f${i}`, 'v')), end),
    expected: TOO_LARGE,
  },
  {
    name: 'too many files (a second photo)',
    type: MULTIPART,
    body: body(file('photo', 'a'), file('photo', 'b'), end),
    expected: TOO_LARGE,
  },
  {
    name: 'a field value past 16 KiB',
    type: MULTIPART,
    body: body(field('sub', 'a'.repeat(16_385)), end),
    expected: TOO_LARGE,
  },
  {
    // Under the route's Content-Length limit (the photo plus 64 KiB), so multer counts it.
    name: 'a photo one byte past max_photo_bytes',
    type: MULTIPART,
    body: body(file('photo', Buffer.alloc(MAX_PHOTO + 1, 0xff)), end),
    expected: TOO_LARGE,
  },
];

const ROUTES = [
  { path: '/verification-srv/authentication/FACE/verification', headers: {} },
  { path: '/verification-actions-srv/setup/FACE/initiation', headers: admin },
  { path: '/verification-actions-srv/setup/FACE/scan', headers: admin },
  { path: '/verification-actions-srv/setup/FACE/verification', headers: admin },
];

async function startFaceServer(logs: LogCapture): Promise<DemoServer> {
  return startDemoServer({
    logger: createLogger('info', logs),
    configure(config) {
      config.plugins.push({ name: '@gatehouse-auth/method-face', options: { channel: 'outbox' } });
    },
  });
}

/** Entries at error level or above (a fault, or a 5xx access line), from the `from`th line on. */
const errorLines = (logs: LogCapture, from = 0) => logs.entries.slice(from).filter((e) => Number(e.level) >= 50);

describe('FACE routes: malformed multipart bodies are the client’s mistake', function () {
  this.timeout(60_000);
  const logs = new LogCapture();
  let server: DemoServer;
  before(async () => {
    server = await startFaceServer(logs);
  });
  after(() => server?.close());

  for (const shape of SHAPES) {
    it(`${shape.name}: ${shape.expected.join(' ')} on each route`, async () => {
      const logged = logs.lines.length;
      for (const route of ROUTES) {
        const res = await fetch(server.url(route.path), {
          method: 'POST',
          headers: { ...route.headers, 'Content-Type': shape.type },
          body: shape.body,
        });
        const json = (await res.json()) as { error?: { code: string } };
        expect([res.status, json.error?.code], route.path).to.deep.equal(shape.expected);
      }
      expect(errorLines(logs, logged)).to.deep.equal([]);
    });
  }
});

describe('FACE verification: a client that stops sending its multipart body', function () {
  this.timeout(60_000);

  it('is not a fault: nothing logged at error level', async () => {
    const logs = new LogCapture();
    const server = await startFaceServer(logs);
    const { hostname, port } = new URL(server.url('/'));
    const socket = net.connect(Number(port), hostname);
    await once(socket, 'connect');
    const partial = body(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"\r\n\r\n`);
    socket.write(
      'POST /verification-srv/authentication/FACE/verification HTTP/1.1\r\n' +
        `Host: ${hostname}:${port}\r\nContent-Type: ${MULTIPART}\r\nContent-Length: 10000\r\n` +
        'Expect: 100-continue\r\n\r\n',
    );
    // The server has the request once it asks for the body; then part of it, and the client is gone.
    await once(socket, 'data');
    socket.write(partial);
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    // Shutting down waits for every request handler to end, the cut one included.
    await server.close();
    expect(errorLines(logs)).to.deep.equal([]);
  });
});
