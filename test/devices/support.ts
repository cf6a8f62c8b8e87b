/**
 * Device tests on the demo config: alice with a password (and TOTP), a simulated authenticator
 * bound through the setup API, and the demo-app login up to its second stage, where PUSH and
 * TOUCHID are offered.
 */
import { expect } from 'chai';
import { decodeJwt, importJWK, type CryptoKey } from 'jose';
import {
  Authenticator,
  DeviceCallError,
  canonicalBody,
  deviceProof,
  type CreateOptions,
  type Push,
} from '@gatehouse-auth/authenticator';
import { Browser, loginRequestId, pkcePair } from '../oauth/support.js';
import {
  DEMO_ADMIN_TOKEN,
  DEMO_APP,
  codeFrom,
  redeemDemo,
  stage,
  startAuthorization,
  startDemoServer,
  type Authorization,
  type DemoServer,
} from '../oauth/demo-server.js';

export { DEMO_ADMIN_TOKEN, DEMO_APP, startDemoServer, pkcePair, type DemoServer };
export { methodOf, outboxMessage } from '../oauth/demo-server.js';

export interface Reply {
  status: number;
  code: string | undefined;
  data: Record<string, unknown>;
}

/** A JSON call; answers the status, the error code (if any) and the data. */
export async function call(
  server: DemoServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Reply> {
  const res = await fetch(server.url(path), {
    method,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
    ...(method === 'GET' || method === 'DELETE' ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { data?: Record<string, unknown>; error?: { code: string } };
  return { status: res.status, code: json.error?.code, data: json.data ?? {} };
}

export const admin = { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}` };

/** Starts account verification of alice's email or phone (admin): the reply, asserted 200. */
export async function startAccountVerification(server: DemoServer, medium: 'email' | 'sms') {
  const started = await call(
    server,
    '/verification-actions-srv/account/initiation',
    { sub: server.alice.id, verification_medium: medium },
    admin,
  );
  expect(started.status, JSON.stringify(started)).to.equal(200);
  return { data: started.data, exchangeId: (started.data.exchange_id as { exchange_id: string }).exchange_id };
}

/** A binding link for alice (the setup API's answer for PUSH or TOUCHID). */
export async function bindingFor(server: DemoServer, method: 'PUSH' | 'TOUCHID', sub = server.alice.id) {
  const reply = await call(server, `/verification-actions-srv/setup/${method}/initiation`, { sub }, admin);
  expect(reply.status, JSON.stringify(reply)).to.equal(200);
  return reply.data as { binding_code: string; binding_url: string; qr_code: string; biometric_required: boolean };
}

/** A simulated device bound to alice, on the server's (fake) clock. */
export async function boundDevice(server: DemoServer, opts: CreateOptions = {}): Promise<Authenticator> {
  const device = await Authenticator.create({ now: () => server.clock.now(), ...opts });
  const { binding_url } = await bindingFor(server, opts.biometric ? 'TOUCHID' : 'PUSH');
  const bound = await device.bind(binding_url);
  expect(bound.sub).to.equal(server.alice.id);
  return device;
}

export interface SecondStage {
  browser: Browser;
  auth: Authorization;
  requestId: string;
}

/** A demo-app login with its password stage done: the next stage offers the device methods. */
export async function atSecondStage(server: DemoServer): Promise<SecondStage> {
  const browser = new Browser(server);
  const auth = await startAuthorization(browser, server, DEMO_APP);
  const requestId = loginRequestId(auth.location);
  const next = await stage(browser, server, requestId, 'PASSWORD', { identify: true });
  expect(next.pathname).to.equal('/login');
  return { browser, auth, requestId };
}

/** Initiates a device method at the second stage (asserting 200). */
export async function initiate(
  server: DemoServer,
  at: SecondStage,
  method: string,
  extra: Record<string, string> = {},
) {
  const reply = await call(server, `/verification-srv/authentication/${method}/initiation`, {
    request_id: at.requestId,
    usage_type: 'MULTIFACTOR_AUTHENTICATION',
    sub: server.alice.id,
    ...extra,
  });
  expect(reply.status, JSON.stringify(reply)).to.equal(200);
  return reply.data as {
    exchange_id: { exchange_id: string };
    status_id: string;
    sub: string;
    medium_text: string;
    push_selected_number?: number;
  };
}

/** The one push in the device's inbox. */
export async function onlyPush(device: Authenticator): Promise<Push> {
  const pushes = await device.pushes();
  expect(pushes).to.have.length(1);
  return pushes[0]!;
}

/** Removes one of alice's devices through the setup API. */
export function removeDevice(server: DemoServer, deviceId: string): Promise<Reply> {
  return call(
    server,
    `/verification-actions-srv/setup/users/${server.alice.id}/devices/${deviceId}`,
    null,
    admin,
    'DELETE',
  );
}

/** Continues the login with the status, follows it to the app and redeems the code: the ID token's claims. */
export async function idTokenAfter(server: DemoServer, at: SecondStage, statusId: string, method: string) {
  const resume = await continueLogin(server, at, statusId, method);
  const code = await codeFrom(at.browser, server, resume, at.auth, DEMO_APP);
  const tokens = await redeemDemo(server, DEMO_APP, code, at.auth.verifier);
  return decodeJwt(tokens.id_token as string);
}

/** Continues the login with an AUTHENTICATED status, as the hosted page does; returns the Location. */
export async function continueLogin(server: DemoServer, at: SecondStage, statusId: string, method: string) {
  const res = await at.browser.postForm('/login/continue', {
    requestId: at.requestId,
    status_id: statusId,
    verificationType: method,
  });
  expect(res.status).to.equal(303);
  return new URL(res.headers.get('location')!, server.issuer);
}

/**
 * A device call made by hand, for the failure rows: `tamper` changes the proof's inputs after
 * the fact (another path, nonce, body, time) the way an attacker replaying or forging one would.
 */
export async function signedCall(
  server: DemoServer,
  device: Authenticator,
  path: string,
  fields: Record<string, unknown>,
  opts: {
    nonce?: string;
    uv?: boolean;
    signedFields?: Record<string, unknown>;
    signedPath?: string;
    iat?: number;
    proof?: string;
  } = {},
): Promise<Reply & { proof: string }> {
  const state = device.state();
  const proof =
    opts.proof ??
    (await deviceProof({
      key: (await importJWK(state.privateJwk, state.alg)) as CryptoKey,
      alg: state.alg,
      deviceId: state.deviceId,
      issuer: state.issuer,
      path: opts.signedPath ?? path,
      body: canonicalBody(opts.signedFields ?? fields),
      ...(opts.nonce !== undefined ? { nonce: opts.nonce } : {}),
      ...(opts.uv ? { uv: true } : {}),
      iat: opts.iat ?? Math.floor(server.clock.now().getTime() / 1000),
    }));
  return { ...(await call(server, path, fields, { 'Device-Proof': proof })), proof };
}

/** The status and code a simulator call failed with (it must fail). */
export async function failure(pending: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await pending;
  } catch (err) {
    if (err instanceof DeviceCallError) return { status: err.status, code: err.code };
    throw err;
  }
  throw new Error('the call succeeded; it should have failed');
}
