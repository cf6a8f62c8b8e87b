import { DEVICE_API_PATHS, type VerificationWebApi } from '@gatehouse-auth/plugin-api';
import type { Request, RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import { PROOF_HEADER } from '../devices/proof.js';
import type { DeviceCookie } from '../http/device.js';
import { lazyLogger } from '../http/logging.js';
import { requestFacts, stringFields } from './context.js';
import type { VerificationService } from './service.js';
import { multipartFor, uploadedFiles } from './uploads.js';

export interface VerificationWebDeps {
  verification: VerificationService;
  /** The hosted page's device cookie, read into the facts FDS rules see. */
  device: DeviceCookie;
  /** The issuer's path: device proofs name the public path of the call. */
  issuerPath: string;
}

/** `?wait=N&state=S`: hold the answer up to N seconds (at most 30) while the state is S. */
function longPoll(query: { wait?: unknown; state?: unknown } | undefined) {
  const seconds = Number(query?.wait);
  const known = typeof query?.state === 'string' ? query.state : '';
  if (!known || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return { known, seconds: Math.min(seconds, 30) };
}

/**
 * The verification service's operations (`web.verification`, decision 78) for the plugin that
 * serves its routes, on the express path and the fast path alike: the fields are read here, and
 * every check is the service's. A device's proof must name the path of the operation run here,
 * not whatever path the plugin was called on.
 */
export class VerificationWeb implements VerificationWebApi {
  private kept?: VerificationWebDeps;
  private upload?: RequestHandler;

  // Nothing is resolved until a request (a plugin takes `admit` in `register`); then once: every
  // read of the container's cradle is a resolve, which allocates, and the fast path is per login.
  constructor(private readonly cradle: VerificationWebDeps) {}

  private get deps(): VerificationWebDeps {
    if (this.kept) return this.kept;
    const { verification, device, issuerPath } = this.cradle;
    return (this.kept = { verification, device, issuerPath });
  }

  readonly admit: RequestHandler = (req, res, next) =>
    (this.upload ??= multipartFor(this.deps.verification))(req, res, next);

  initiate(req: IncomingMessage, method: string, body: unknown, ip?: string) {
    const { fields } = stringFields(body);
    const request = requestFacts(req, ip, this.deps.device);
    return this.deps.verification.initiate(method, { fields, request, logger: lazyLogger(() => req.log) });
  }

  verify(req: IncomingMessage, method: string, body: unknown, ip?: string) {
    const proof = req.headers[PROOF_HEADER];
    const device = {
      proof: typeof proof === 'string' ? proof : undefined,
      path: this.deps.issuerPath + DEVICE_API_PATHS.verify.replace(':method', method),
    };
    // Only `admit` reads files: a request it did not see (the fast path's) has none.
    const files = (req as Request).files ? uploadedFiles(req) : [];
    const request = requestFacts(req, ip, this.deps.device);
    const logger = lazyLogger(() => req.log);
    return this.deps.verification.verify(method, { ...stringFields(body), files, request, logger, device });
  }

  status(statusId: string, query?: { wait?: unknown; state?: unknown }) {
    return this.deps.verification.status(statusId, longPoll(query));
  }

  cancel(req: IncomingMessage, method: string, body: unknown) {
    const { fields, keys } = stringFields(body);
    return this.deps.verification.cancel(method, fields, keys, requestFacts(req), req.log);
  }
}
