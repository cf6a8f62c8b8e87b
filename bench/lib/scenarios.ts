/** The load of each scenario, as autocannon options for one server. */
import type { RawRequest, RequestSpec } from 'autocannon';
import { generateSync } from 'otplib';
import type { ServerChild } from './children.js';
import { API_SCOPE, basicAuth, CODE_CLIENT, OPAQUE_CLIENT, PASSWORD, REDIRECT_URI } from './clients.js';
import type { LoadOptions } from './load.js';

export type ServerKind = 'gatehouse' | 'peer';

const FORM = 'application/x-www-form-urlencoded';
const tokenPath = (kind: ServerKind) => (kind === 'peer' ? '/token' : '/oauth/token');
const introspectionPath = (kind: ServerKind) => (kind === 'peer' ? '/token/introspection' : '/token/introspect');

export type Load = Omit<LoadOptions, 'durationSeconds' | 'connections'>;

/** a/b: POST the token endpoint with Basic auth, grant_type=client_credentials. */
export function clientCredentials(server: ServerChild, kind: ServerKind, client: { id: string; secret: string }): Load {
  return {
    url: server.issuer,
    method: 'POST',
    path: tokenPath(kind),
    headers: { Authorization: basicAuth(client), 'Content-Type': FORM },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: API_SCOPE }).toString(),
  };
}

/** Obtains an opaque token of OPAQUE_CLIENT to introspect. */
export async function opaqueToken(server: ServerChild, kind: ServerKind): Promise<string> {
  const res = await fetch(new URL(tokenPath(kind), server.issuer), {
    method: 'POST',
    headers: { Authorization: basicAuth(OPAQUE_CLIENT), 'Content-Type': FORM },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: API_SCOPE }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`${server.name}: no token (${res.status})`);
  return body.access_token;
}

/** c: introspection of a valid opaque token, by the client it was issued to (Basic auth). */
export function introspection(server: ServerChild, kind: ServerKind, token: string): Load {
  return {
    url: server.issuer,
    method: 'POST',
    path: introspectionPath(kind),
    headers: { Authorization: basicAuth(OPAQUE_CLIENT), 'Content-Type': FORM },
    body: new URLSearchParams({ token }).toString(),
  };
}

/** h: introspection of several valid tokens in turn (lookups spread over the table, not one hot row). */
export function introspectionInTurn(server: ServerChild, tokens: string[]): Load {
  if (!tokens.length) throw new Error('no tokens to introspect');
  let next = 0;
  const spec: RequestSpec = {
    method: 'POST',
    path: introspectionPath('gatehouse'),
    headers: { Authorization: basicAuth(OPAQUE_CLIENT), 'Content-Type': FORM },
    setupRequest: (req: RawRequest) => ({
      ...req,
      body: new URLSearchParams({ token: tokens[next++ % tokens.length]! }).toString(),
    }),
  };
  return { url: server.issuer, requests: [spec] };
}

/** e: the form of one code exchange (PKCE verifier, the registered redirect URI). */
export const codeExchangeBody = (code: string, verifier: string) =>
  new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
  }).toString();

/**
 * e: the code exchange, one fresh single-use code per request, in `bodies` order (the top-level
 * method, path and headers are wrk's; autocannon takes the request list).
 */
export function codeExchange(server: ServerChild, kind: ServerKind, bodies: string[]): Load {
  let next = 0;
  const headers = { Authorization: basicAuth(CODE_CLIENT), 'Content-Type': FORM };
  const spec: RequestSpec = {
    method: 'POST',
    path: tokenPath(kind),
    headers,
    setupRequest: (req: RawRequest) => ({ ...req, body: bodies[next++] ?? codeExchangeBody('used-up', 'x') }),
  };
  return { url: server.issuer, method: 'POST', path: tokenPath(kind), headers, requests: [spec] };
}

/** A user enrolled with TOTP, and the lowest time step the bench may still use for it. */
export interface TotpUser {
  username: string;
  secret: string;
  nextStep: number;
}

const STEP_MS = 30_000;

/**
 * The next (user, code) that the server will accept: each user's steps strictly increase
 * (replay protection accepts each step once per credential), within the ±1 step window.
 * The previous step is used only when it cannot end before the verification arrives.
 * `exhausted` counts the pairs for which no user had a usable step left: those fail by
 * construction (the bench ran out of codes), and say nothing about the server.
 */
export function totpPicker(users: TotpUser[]): { next: () => { username: string; code: string }; exhausted: number } {
  let cursor = 0;
  const picker = {
    exhausted: 0,
    next: () => {
      const now = Date.now();
      const current = Math.floor(now / STEP_MS);
      const lowest = now % STEP_MS < STEP_MS - 2000 ? current - 1 : current;
      for (let tries = 0; tries < users.length; tries += 1) {
        const user = users[cursor]!;
        cursor = (cursor + 1) % users.length;
        const step = Math.max(user.nextStep, lowest);
        if (step <= current + 1) {
          user.nextStep = step + 1;
          return { username: user.username, code: generateSync({ secret: user.secret, epoch: step * 30 }) };
        }
      }
      // Every user has spent every usable step: this pair will fail, and be counted as such.
      picker.exhausted += 1;
      return { username: users[0]!.username, code: '000000' };
    },
  };
  return picker;
}

/**
 * A verification pair (initiation, then verification of its exchange) as two chained
 * autocannon requests on one connection; `proof` gives the identifier and the proof fields.
 */
export function verificationPair(
  server: ServerChild,
  method: 'TOTP' | 'PASSWORD',
  requestIds: string[],
  proof: () => { username: string; fields: Record<string, string> },
  failed: FailureTally = new FailureTally(),
): Load {
  // A flow hosts one pair at a time: a new initiation on a flow supersedes the exchange of the
  // one before, so two pairs in flight on one flow would fail each other. A pair takes a free
  // flow and gives it back when it ends (autocannon clears `context` every pair, so flows cannot
  // be pinned to connections). There are as many flows as connections.
  const free = [...requestIds];
  let spare = 0;
  const release = (requestId: unknown) => {
    if (typeof requestId === 'string' && !free.includes(requestId)) free.push(requestId);
  };
  const json = { 'Content-Type': 'application/json' };
  return {
    url: server.issuer,
    requests: [
      {
        method: 'POST',
        path: `/verification-srv/authentication/${method}/initiation`,
        headers: json,
        setupRequest: (req, context) => {
          const next = proof();
          context.fields = next.fields;
          context.requestId = free.pop() ?? requestIds[spare++ % requestIds.length]!;
          return { ...req, body: JSON.stringify({ request_id: context.requestId, identifier: next.username }) };
        },
        onResponse: (status, body, context) => {
          if (status >= 300) {
            failed.add('initiation', status, body);
            release(context.requestId);
          }
          context.exchangeId =
            status === 200
              ? (JSON.parse(body) as { data: { exchange_id: { exchange_id: string } } }).data.exchange_id.exchange_id
              : 'none';
        },
      },
      {
        method: 'POST',
        path: `/verification-srv/authentication/${method}/verification`,
        headers: json,
        setupRequest: (req, context) => ({
          ...req,
          body: JSON.stringify({ exchange_id: context.exchangeId, ...(context.fields as Record<string, string>) }),
        }),
        onResponse: (status, body, context) => {
          if (status >= 300) failed.add('verification', status, body);
          release(context.requestId);
        },
      },
    ],
  };
}

/** Failed responses of a pair load by step and status, with one body of each (to say why they failed). */
export class FailureTally {
  private readonly counts = new Map<string, { count: number; body: string }>();

  add(step: string, status: number, body: string): void {
    const key = `${step} ${status}`;
    const entry = this.counts.get(key);
    if (entry) entry.count += 1;
    else this.counts.set(key, { count: 1, body: body.slice(0, 160) });
  }

  /** E.g. `verification 401 × 12 ({"error":…})`, or null when nothing failed. */
  summary(): string | null {
    if (!this.counts.size) return null;
    return [...this.counts].map(([key, e]) => `${key} × ${e.count} (${e.body})`).join('; ');
  }
}

/** g: PASSWORD pairs for a few users, round robin. */
export function passwordPair(server: ServerChild, requestIds: string[], usernames: string[]): Load {
  let next = 0;
  return verificationPair(server, 'PASSWORD', requestIds, () => ({
    username: usernames[next++ % usernames.length]!,
    fields: { password: PASSWORD },
  }));
}
