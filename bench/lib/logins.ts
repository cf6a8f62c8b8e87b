/**
 * Scenario j: whole logins, end to end, as a browser and its app make them: authorize (PKCE) →
 * PASSWORD → continue → TOTP → continue → resume → code → token request. A closed loop of
 * `connections` browsers for `durationSeconds`; each login counts once, with its latency.
 */
import { LOGIN_CLIENT, PASSWORD, REDIRECT_URI } from './clients.js';
import { apiCall, Browser, codeFromResume, pkcePair, startLogin } from './gatehouse-flows.js';

export interface LoginsResult {
  logins: number;
  perSecond: number;
  p50: number;
  p99: number;
  failures: Record<string, number>;
  durationSeconds: number;
}

/** The continuation form post of a finished stage; resolves with where it sends the browser. */
function continueLogin(browser: Browser, requestId: string, statusId: string, method: string): Promise<URL> {
  return browser.follow('/login/continue', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ requestId, status_id: statusId, verificationType: method }).toString(),
  });
}

/** One stage through the verification API: initiation, then verification with `proof`. */
async function stage(base: string, method: string, start: Record<string, string>, proof: Record<string, string>) {
  const initiated = await apiCall<{ exchange_id: { exchange_id: string } }>(
    base,
    `/verification-srv/authentication/${method}/initiation`,
    start,
  );
  return apiCall<{ status_id: string; sub: string }>(base, `/verification-srv/authentication/${method}/verification`, {
    exchange_id: initiated.exchange_id.exchange_id,
    ...proof,
  });
}

/** One login of `user`, ending with the app's token response. */
async function login(base: string, username: string, totpCode: string): Promise<void> {
  const browser = new Browser(base);
  const { verifier, challenge } = pkcePair();
  const requestId = await startLogin(browser, LOGIN_CLIENT.id, challenge);
  const first = await stage(
    base,
    'PASSWORD',
    { request_id: requestId, usage_type: 'INITIAL_AUTHENTICATION', identifier: username },
    { password: PASSWORD },
  );
  const next = await continueLogin(browser, requestId, first.status_id, 'PASSWORD');
  if (next.pathname !== '/login') throw new Error(`after PASSWORD: expected the second stage, got ${next.pathname}`);
  const second = await stage(
    base,
    'TOTP',
    { request_id: requestId, usage_type: 'MULTIFACTOR_AUTHENTICATION', sub: first.sub },
    { pass_code: totpCode },
  );
  const code = await codeFromResume(browser, await continueLogin(browser, requestId, second.status_id, 'TOTP'));
  const tokens = await fetch(new URL('/oauth/token', base), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${LOGIN_CLIENT.id}:${LOGIN_CLIENT.secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    }).toString(),
  });
  if (tokens.status !== 200) throw new Error(`token: ${tokens.status} ${await tokens.text()}`);
  await tokens.arrayBuffer();
}

/** `connections` browsers logging in one after another for `durationSeconds`. */
export async function runLogins(opts: {
  base: string;
  nextCode: () => { username: string; code: string };
  connections: number;
  durationSeconds: number;
}): Promise<LoginsResult> {
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const started = Date.now();
  const end = started + opts.durationSeconds * 1000;
  const worker = async () => {
    while (Date.now() < end) {
      const { username, code } = opts.nextCode();
      const t0 = performance.now();
      try {
        await login(opts.base, username, code);
        latencies.push(performance.now() - t0);
      } catch (err) {
        const why = (err as Error).message.split(':')[0] ?? 'error';
        failures[why] = (failures[why] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.connections }, worker));
  const durationSeconds = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! : 0;
  return {
    logins: latencies.length,
    perSecond: latencies.length / durationSeconds,
    p50: Math.round(at(0.5)),
    p99: Math.round(at(0.99)),
    failures,
    durationSeconds,
  };
}
