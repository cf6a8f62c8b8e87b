/**
 * Setting up Gatehouse for the bench through its real HTTP API only: users and enrollment
 * through the admin API, login flows through the authorization endpoint, codes through the
 * whole front channel (authorize → PASSWORD via the verification API → continue → resume).
 */
import { createHash, randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { ADMIN_TOKEN, PASSWORD, REDIRECT_URI } from './clients.js';

/** RFC 7636 S256: a verifier and its challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A cookie jar and a fetch that never follows redirects. */
export class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('Cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    // A browser sends Origin with every POST; /login/continue refuses a form without it.
    if (init.method && init.method !== 'GET') headers.set('Origin', new URL(this.base).origin);
    const res = await fetch(new URL(path, this.base), { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(pair.slice(0, eq).trim());
      else this.cookies.set(pair.slice(0, eq).trim(), value);
    }
    return res;
  }

  /** Drops the cookies whose name matches. */
  forget(name: RegExp): void {
    for (const key of [...this.cookies.keys()]) if (name.test(key)) this.cookies.delete(key);
  }

  /** The Location of a 303, or an error naming what came instead. */
  async follow(path: string, init: RequestInit = {}): Promise<URL> {
    const res = await this.request(path, init);
    const location = res.headers.get('location');
    if (res.status !== 303 || !location) {
      throw new Error(
        `${init.method ?? 'GET'} ${path.split('?')[0]}: expected 303, got ${res.status} ${await res.text()}`,
      );
    }
    return new URL(location, this.base);
  }
}

/** POST JSON and return the envelope's `data`; throws on anything but 2xx. */
export async function apiCall<T>(base: string, path: string, body: unknown, admin = false): Promise<T> {
  const res = await fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(admin ? { Authorization: `Bearer ${ADMIN_TOKEN}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

export interface BenchUser {
  id: string;
  username: string;
}

export async function createUser(base: string, username: string): Promise<BenchUser> {
  const user = await apiCall<{ id: string }>(base, '/admin/users', { username }, true);
  return { id: user.id, username };
}

export async function enrolPassword(base: string, user: BenchUser): Promise<void> {
  await apiCall(
    base,
    '/verification-actions-srv/setup/PASSWORD/initiation',
    { sub: user.id, password: PASSWORD },
    true,
  );
}

/** Enrols TOTP; returns the seed and the time step its confirmation spent (used steps only go up). */
export async function enrolTotp(base: string, user: BenchUser): Promise<{ secret: string; step: number }> {
  const { secret } = await apiCall<{ secret: string }>(
    base,
    '/verification-actions-srv/setup/TOTP/initiation',
    { sub: user.id },
    true,
  );
  // The previous step first (inside the ±1 window): it leaves the user both the current and the
  // next step for the run, twice the pairs of enrolling with the current one. Then the current
  // step, once more if a step boundary fell between computing and checking it.
  for (let attempt = 0; ; attempt += 1) {
    const step = Math.floor(Date.now() / 30_000) - (attempt === 0 ? 1 : 0);
    const pass_code = await generate({ secret, epoch: step * 30 });
    try {
      await apiCall(base, '/verification-actions-srv/setup/TOTP/verification', { sub: user.id, pass_code }, true);
      return { secret, step };
    } catch (err) {
      if (attempt >= 2) throw err;
    }
  }
}

/** A new login flow of `clientId` (authorize with PKCE → 303 /login?request_id=…). */
export async function startLogin(browser: Browser, clientId: string, challenge: string): Promise<string> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid api:read',
    state: randomBytes(8).toString('base64url'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const next = await browser.follow(`/api/oauth2/authorize/?${query.toString()}`);
  const requestId = next.searchParams.get('request_id');
  if (next.pathname !== '/login' || !requestId) throw new Error(`authorize: expected /login, got ${next.href}`);
  return requestId;
}

/** The code in the client's redirect, from the resume hop. */
export async function codeFromResume(browser: Browser, resume: URL): Promise<string> {
  const callback = await browser.follow(resume.pathname + resume.search);
  // Gatehouse leaves each flow's binding cookie until it expires (flow_ttl); hundreds of sign-ins
  // in a row would outgrow Node's 16 KB header limit (431), so this browser forgets finished ones.
  browser.forget(/^gh_flow_/);
  const code = callback.searchParams.get('code');
  if (!code || !callback.href.startsWith(REDIRECT_URI))
    throw new Error(`resume: expected a code, got ${callback.href}`);
  return code;
}

/** A code through the whole front channel with a password login (authorize → PASSWORD → code). */
export async function codeByLogin(
  browser: Browser,
  base: string,
  clientId: string,
  challenge: string,
  user: BenchUser,
): Promise<string> {
  const requestId = await startLogin(browser, clientId, challenge);
  const initiated = await apiCall<{ exchange_id: { exchange_id: string } }>(
    base,
    '/verification-srv/authentication/PASSWORD/initiation',
    { request_id: requestId, identifier: user.username },
  );
  const verified = await apiCall<{ status_id: string }>(
    base,
    '/verification-srv/authentication/PASSWORD/verification',
    {
      exchange_id: initiated.exchange_id.exchange_id,
      password: PASSWORD,
    },
  );
  const resume = await browser.follow('/login/continue', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ requestId, status_id: verified.status_id, verificationType: 'PASSWORD' }).toString(),
  });
  return codeFromResume(browser, resume);
}
