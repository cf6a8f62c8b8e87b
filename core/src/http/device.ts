import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomToken, sha256 } from '../util/crypto.js';
import { readCookie } from './cookies.js';

const VALUE = /^[A-Za-z0-9_-]{43}$/;
/** Chrome keeps a cookie at most 400 days. */
const MAX_AGE_SECONDS = 400 * 86_400;

/**
 * The browser's device cookie: a random value the server sets on the hosted login page, so that
 * failed sign-ins can be told apart by where they come from (fds-velocity lets a device the
 * user already signed in from through a back-off that strangers caused). Only its SHA-256 is
 * ever stored. On https it is a `__Host-` cookie, which no other (sub)domain can set: a tossed
 * cookie would let an attacker's device pass for the user's.
 */
export class DeviceCookie {
  readonly name: string;

  constructor(private readonly secure: boolean) {
    this.name = secure ? '__Host-gh_device' : 'gh_device';
  }

  /** The key of this request's device (the cookie's hash), or null without a well-formed one. */
  keyOf(req: IncomingMessage): string | null {
    const value = readCookie(req, this.name);
    return value && VALUE.test(value) ? sha256(`device:${value}`) : null;
  }

  /** Gives a browser without a device cookie one. */
  ensure(req: IncomingMessage, res: ServerResponse): void {
    if (this.keyOf(req)) return;
    const attributes = [
      `Max-Age=${MAX_AGE_SECONDS}`,
      'Path=/',
      'HttpOnly',
      'SameSite=Lax',
      ...(this.secure ? ['Secure'] : []),
    ];
    const existing = res.getHeader('Set-Cookie');
    const list = Array.isArray(existing) ? existing : existing === undefined ? [] : [String(existing)];
    res.setHeader('Set-Cookie', [...list, `${this.name}=${randomToken(32)}; ${attributes.join('; ')}`]);
  }
}
