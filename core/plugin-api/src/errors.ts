/**
 * The protocol errors (decision 4's first tier: a client's mistake, with an HTTP status and a
 * stable code; safe to show), in the contract since decision 84: plugins throw them, and the
 * route declarations (`routeInput`, `VERIFICATION_ROUTE_PARTS`) answer with them. The core's
 * error handler writes them; its start-up failures (`BootError`) stay the core's.
 */
/**
 * Brands that survive a second copy of this module (a plugin bundling or resolving its own
 * @gatehouse-auth/core): `instanceof` would fail across copies, `Symbol.for` does not.
 */
const PROTOCOL_ERROR = Symbol.for('gatehouse.ProtocolError');

/** True for any Gatehouse protocol error, from whichever copy of the core created it. */
export function isProtocolError(err: unknown): err is ProtocolError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[PROTOCOL_ERROR] === true;
}

/** A failure the caller can act on; subclasses decide the wire format of the body. */
export abstract class ProtocolError extends Error {
  readonly expose = true;
  readonly [PROTOCOL_ERROR] = true;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
  /** Extra response headers (e.g. WWW-Authenticate). */
  headers(): Record<string, string> {
    return {};
  }
  abstract body(requestId: string): unknown;
}

/** Error categories of the Gatehouse API envelope, by status. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableEntity',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  503: 'ServiceUnavailable',
};

/**
 * The Gatehouse API envelope used by the verification, login and admin APIs:
 * `{"success":false,"status":409,"error":{"code":"EXCHANGE_USED",...}}`.
 */
export class ApiError extends ProtocolError {
  constructor(
    status: number,
    code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(status, code, message);
  }
  body(requestId: string): unknown {
    return apiErrorBody(this.status, this.code, this.message, requestId, this.details);
  }
  /** A wait in `details.retry_after` (seconds) is also the `Retry-After` header. */
  override headers(): Record<string, string> {
    const wait = this.details?.['retry_after'];
    return typeof wait === 'number' && wait > 0 ? { 'Retry-After': String(wait) } : {};
  }
}

export function apiErrorBody(
  status: number,
  code: string,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
): unknown {
  return {
    success: false,
    status,
    error: {
      code,
      error: message,
      type: TYPE_BY_STATUS[status] ?? 'Error',
      status,
      referenceNumber: requestId,
      ...(details ? { details } : {}),
    },
  };
}
