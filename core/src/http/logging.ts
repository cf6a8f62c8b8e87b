import { randomUUID } from 'node:crypto';
import { IncomingMessage, type ServerResponse } from 'node:http';
import { pino, type Logger, type DestinationStream } from 'pino';

/** Field names whose values are secrets wherever they appear in a log line. */
export const SECRET_KEYS = [
  'password',
  'new_password',
  'pass_code',
  'code',
  'code_verifier',
  'client_secret',
  'secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'assertion',
  'client_assertion',
  'subject_token',
  'actor_token',
  'otp',
];

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-admin-token"]',
  'res.headers["set-cookie"]',
  'res.headers.location',
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`]),
];

const SECRET_KEY_SET = new Set(SECRET_KEYS);

/** Replaces secret-named fields at any depth (pino's redact paths reach fixed depths only). */
export function scrubSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubSecrets(v, depth + 1));
  if (value instanceof Error || value instanceof Date || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_KEY_SET.has(key) ? '[redacted]' : scrubSecrets(v, depth + 1);
  }
  return out;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gatehouse' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { log: (object) => scrubSecrets(object) as Record<string, unknown> },
    },
    destination,
  );
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a well-formed incoming X-Request-Id (from a proxy), otherwise makes one. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Query values of secret-named parameters are replaced, so URLs can be logged. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const key of [...params.keys()]) {
    if (SECRET_KEYS.includes(key) || key === 'state' || key === 'nonce') params.set(key, '[redacted]');
  }
  return `${url.slice(0, q)}?${params.toString()}`;
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id), set by httpLogger. */
    id: string;
    /** A child logger bound to the request id, made on first use. */
    log: Logger;
  }
}

/** What httpLogger keeps on a request: the base logger, the URL as it came, the child once made. */
interface RequestLog {
  logger: Logger;
  url: string;
  started: bigint;
  child: Logger | undefined;
}
// Symbol.for: every copy of this module in a process (source and build in tests) reads the same state.
const REQUEST_LOG = Symbol.for('gatehouse.requestLog');
type LoggedRequest = IncomingMessage & { [REQUEST_LOG]?: RequestLog };

/**
 * `req.log` is a getter on the prototype, defined once: an accessor defined on each request
 * turned its properties into a dictionary, 2.5 KB allocated per request (bench/allocations.ts).
 * A request httpLogger has not seen has no `log`; assigning one (a test's fake) is kept.
 */
Object.defineProperty(IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: LoggedRequest): Logger | undefined {
    const state = this[REQUEST_LOG];
    // Every line a handler logs names the request (not its headers: those are in the access log).
    return (
      state &&
      (state.child ??= state.logger.child({ req: { id: this.id, method: this.method, url: redactUrl(state.url) } }))
    );
  },
  set(this: IncomingMessage, value: Logger) {
    Object.defineProperty(this, 'log', { value, writable: true, configurable: true, enumerable: true });
  },
});

/** The access log line of a finished response; one function for every response (no closure each). */
function logCompleted(this: ServerResponse): void {
  const req = this.req as LoggedRequest;
  const state = req[REQUEST_LOG]!;
  const level = this.statusCode >= 500 ? 'error' : 'info';
  if (!state.logger.isLevelEnabled(level)) return;
  state.logger[level](
    {
      reqId: req.id,
      req: {
        id: req.id,
        method: req.method,
        url: redactUrl(state.url),
        headers: req.headers,
        remoteAddress: req.socket.remoteAddress,
      },
      res: { statusCode: this.statusCode, headers: this.getHeaders() },
      responseTime: Number(process.hrtime.bigint() - state.started) / 1e6,
    },
    'request completed',
  );
}

/**
 * Request ids and access logs: one `request completed` line per request (at error level for
 * 5xx), with redacted URL and headers. Cheaper than pino-http on the hot endpoints: the child
 * logger is made only when a handler logs, and nothing is formatted below the log level.
 */
export function httpLogger(logger: Logger): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    const id = requestIdOf(req);
    req.id = id;
    res.setHeader('X-Request-Id', id);
    // As it came: a router mounted at a path (a plugin's) strips that path from req.url.
    const url = req.url ?? '';
    (req as LoggedRequest)[REQUEST_LOG] = { logger, url, started: process.hrtime.bigint(), child: undefined };
    if (!url.startsWith('/health/')) res.on('finish', logCompleted);
    next();
  };
}

/**
 * A logger that makes the real one on first use. Grant handlers receive the request's logger,
 * and making a child logger costs more than most grants when nothing is logged.
 */
export function lazyLogger(make: () => Logger): Logger {
  let real: Logger | undefined;
  return new Proxy({} as Logger, {
    get(_target, prop) {
      real ??= make();
      const value = Reflect.get(real, prop, real) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(real) : value;
    },
    has: (_target, prop) => Reflect.has((real ??= make()), prop),
  });
}
