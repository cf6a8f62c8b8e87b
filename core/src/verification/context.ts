import type { AppSettingsLookup, MethodContext, RequestFacts, Services, UserRecord } from '@gatehouse-auth/plugin-api';
import { textFields } from '@gatehouse-auth/plugin-api';
import type { Logger } from 'pino';
import type { IncomingMessage } from 'node:http';
import type { DeviceCookie } from '../http/device.js';

/** The client address of an express request: `req.ip` honours `trust proxy` only. */
export function clientIp(req: IncomingMessage & { ip?: string | undefined }): string {
  return req.ip ?? req.socket.remoteAddress ?? '';
}

/**
 * What methods and FDS rules may know about the request. The client address is express's
 * (`clientIp`) or the one withFastRoutes computed with the same trust function.
 */
export function requestFacts(
  req: IncomingMessage & { ip?: string | undefined },
  ip: string = clientIp(req),
  device?: DeviceCookie,
): RequestFacts {
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : '';
  };
  return {
    ip,
    userAgent: header('user-agent').slice(0, 512),
    acceptLanguage: header('accept-language').slice(0, 256),
    deviceId: header('x-device-id').slice(0, 128) || null,
    deviceKey: device?.keyOf(req) ?? null,
    requestId: String(req.id ?? ''),
  };
}

/** Where a step of a sign-in happens: the app, the request and its logger. */
export interface At {
  clientId: string;
  request: RequestFacts;
  logger: Logger;
}

/** The app's options for a method, as a context member: absent when the app sets none. */
export function appOptionsOf(settings: AppSettingsLookup | undefined, clientId: string, methodId: string) {
  const appOptions = settings?.get(clientId)?.methods[methodId];
  return appOptions !== undefined ? { appOptions } : {};
}

/** What a method sees of one user at an app: the user's credentials of it and the app's options. */
export function methodContextOf(
  deps: { services: Pick<Services, 'credentials'>; appSettings?: AppSettingsLookup | undefined },
  user: UserRecord,
  methodId: string,
  at: At,
): MethodContext {
  const credentials = deps.services.credentials(user.id, methodId);
  return { user, credentials, ...at, ...appOptionsOf(deps.appSettings, at.clientId, methodId) };
}

/** The id of the phantom user: no real user has it (ids are random UUIDs). */
export const PHANTOM_USER_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Addresses of the phantom, in domains nothing is delivered to (RFC 2606 `.invalid`; +1 555
 * 01xx is fictional): with them, a method's "is it set up?" finds a primary address and reads
 * no further destinations, as for most real users. Nothing is ever sent to the phantom.
 */
const PHANTOM_EMAIL = 'nobody@phantom.invalid';
const PHANTOM_PHONE = '+15550100000';

/**
 * Stands in for an unknown (or not enrolled, or disabled) user at the first stage, so the
 * answers and timing do not reveal which identifiers exist. It has no credentials.
 */
export function phantomUser(identifier: string): UserRecord {
  return {
    id: PHANTOM_USER_ID,
    username: identifier,
    email: PHANTOM_EMAIL,
    phone: PHANTOM_PHONE,
    status: 'active',
  };
}

/** Request fields as strings; anything else (arrays from repeated form fields, objects) is kept out. */
export function stringFields(body: unknown): { fields: Record<string, string>; malformed: string[]; keys: string[] } {
  const entries = body && typeof body === 'object' ? Object.entries(body as Record<string, unknown>) : [];
  const plain = (v: unknown) => v === null || ['undefined', 'string', 'number', 'boolean'].includes(typeof v);
  const malformed = entries.filter(([, value]) => !plain(value)).map(([key]) => key);
  return { fields: textFields(body), malformed, keys: entries.map(([key]) => key) };
}

/**
 * Who a request names at the first stage: `identifier`, or the field cidaas clients use for the
 * kind of identifier they asked for (`email`, `mobile_number`, `mobile`, `username`).
 */
export function namedIdentifier(fields: Record<string, string>): string | undefined {
  return fields.identifier ?? fields.email ?? fields.mobile_number ?? fields.mobile ?? fields.username;
}
