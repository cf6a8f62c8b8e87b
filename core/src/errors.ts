/**
 * Gatehouse has three tiers of errors (see docs/decisions/0004-error-tiers.md):
 * - ProtocolError: a client's mistake, with an HTTP status and a stable code; safe to show.
 * - BootError: a start-up failure (config, plugin loading), naming what is wrong.
 * - anything else is a fault: logged with the request id, shown as a bare 500.
 */
import { ApiError, type MethodRefusal } from '@gatehouse-auth/plugin-api';

// The protocol errors are the contract's (decision 84): plugins throw them and the route
// declarations answer with them; the core's modules keep importing them from here.
export { ApiError, apiErrorBody, isProtocolError, ProtocolError } from '@gatehouse-auth/plugin-api';

/**
 * Brands that survive a second copy of this module (a plugin bundling or resolving its own
 * @gatehouse-auth/core): `instanceof` would fail across copies, `Symbol.for` does not.
 */
const BOOT_ERROR = Symbol.for('gatehouse.BootError');

export function isBootError(err: unknown): err is BootError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BOOT_ERROR] === true;
}

/** A method's refusal as the API answers it; a wait it names is `details.retry_after` (and so `Retry-After`). */
export function methodRefusalError({ status, code, message, retryAfter }: MethodRefusal): ApiError {
  return new ApiError(status, code, message, retryAfter === undefined ? undefined : { retry_after: retryAfter });
}

/** Start-up failure. `code` is stable (e.g. PLUGIN_NOT_FOUND); the message names the culprit. */
export class BootError extends Error {
  readonly [BOOT_ERROR] = true;
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BootError';
  }
}
