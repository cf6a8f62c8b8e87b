/**
 * Steps of the verification API as small helpers, so the tests read as scenarios: enrol a
 * method, initiate, verify, continue the login, and assert the error envelope exactly.
 */
import path from 'node:path';
import { expect } from 'chai';
import { generate } from 'otplib';
import type { Response } from 'supertest';
import { ADMIN_TOKEN, FIXTURES, type VerificationApp } from './support.js';

export const PASSWORD = 'correct horse battery staple 42';
export const WRONG_PASSWORD = 'incorrect horse battery staple 42';

/** Asserts the error envelope of the Gatehouse API with the exact status and code. */
export function expectError(res: Response, status: number, code: string): void {
  expect(res.status, `${res.status} ${JSON.stringify(res.body)}`).to.equal(status);
  expect(res.body).to.have.all.keys('success', 'status', 'error');
  expect(res.body.success).to.equal(false);
  expect(res.body.status).to.equal(status);
  const error = res.body.error as Record<string, unknown>;
  expect(Object.keys(error)).to.include.members(['code', 'error', 'type', 'status', 'referenceNumber']);
  expect(
    Object.keys(error).filter((k) => !['code', 'error', 'type', 'status', 'referenceNumber', 'details'].includes(k)),
  ).to.deep.equal([]);
  expect(error.code).to.equal(code);
  expect(error.status).to.equal(status);
  expect(error.error).to.be.a('string').and.not.equal('');
  expect(error.type).to.be.a('string').and.not.equal('');
  expect(error.referenceNumber).to.be.a('string').and.not.equal('');
}

/** Asserts a success envelope and returns its data. */
export function dataOf<T = Record<string, unknown>>(res: Response): T {
  expect(res.status, `${res.status} ${JSON.stringify(res.body)}`).to.equal(200);
  expect(res.body).to.include({ success: true, status: 200 });
  return res.body.data as T;
}

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** POST /verification-actions-srv/setup/{method}/{step} as the admin, for user `sub`. */
export function setup(v: VerificationApp, method: string, step: string, body: Record<string, unknown>) {
  return v.http.post(`/verification-actions-srv/setup/${method}/${step}`).set(admin).send(body);
}

export async function enrolPassword(v: VerificationApp, sub: string, password = PASSWORD): Promise<void> {
  dataOf(await setup(v, 'PASSWORD', 'initiation', { sub, password }));
}

/** TOTP setup; returns the seed. The confirming code's time step counts as used. */
export async function enrolTotp(v: VerificationApp, sub: string): Promise<string> {
  const { secret } = dataOf<{ secret: string }>(await setup(v, 'TOTP', 'initiation', { sub }));
  const confirmed = dataOf(await setup(v, 'TOTP', 'verification', { sub, pass_code: await totpCode(secret) }));
  expect(confirmed).to.deep.equal({ enrolled: true });
  return secret;
}

/** The TOTP code `steps` time steps from now (the server accepts ±1 step). */
export function totpCode(secret: string, steps = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
}

/** BACKUPCODE setup (also regeneration); returns the codes shown once. */
export async function enrolBackupCodes(v: VerificationApp, sub: string): Promise<string[]> {
  const { codes } = dataOf<{ codes: string[] }>(await setup(v, 'BACKUPCODE', 'initiation', { sub }));
  return codes;
}

export interface Initiated {
  exchangeId: string;
  statusId: string;
  data: Record<string, unknown>;
}

/** Initiates `method` in flow `requestId`; `who` is `{ identifier }` (stage 1) or `{ sub }`. */
export async function initiate(
  v: VerificationApp,
  method: string,
  requestId: string,
  who: Record<string, string>,
  extra: Record<string, string> = {},
): Promise<Initiated> {
  const usage = 'sub' in who ? 'MULTIFACTOR_AUTHENTICATION' : 'INITIAL_AUTHENTICATION';
  const res = await v.http
    .post(`/verification-srv/authentication/${method}/initiation`)
    .send({ request_id: requestId, usage_type: usage, ...who, ...extra });
  // A first-stage initiation finishes (and its message goes out) after the answer.
  await v.gatehouse.idle();
  const data = dataOf<{ exchange_id: { exchange_id: string }; status_id: string }>(res);
  return { exchangeId: data.exchange_id.exchange_id, statusId: data.status_id, data: data as Record<string, unknown> };
}

/** POST …/{method}/verification with a JSON body. */
export function verify(v: VerificationApp, method: string, body: Record<string, unknown>) {
  return v.http.post(`/verification-srv/authentication/${method}/verification`).send(body);
}

export interface Continued {
  request_id: string;
  completed: boolean;
  stage: number;
  next_methods: string[];
  redirect_to: string;
}

/** POST /login/continue (the hosted page's continuation), form-encoded, asking for JSON. */
export function continueLogin(v: VerificationApp, fields: Record<string, string>) {
  return v.http.post('/login/continue').type('form').set('Accept', 'application/json').send(fields);
}

/** A stage-1 PASSWORD login of `username` in a fresh exchange; returns the AUTHENTICATED status_id. */
export async function passwordStage(v: VerificationApp, requestId: string, user: TestUser): Promise<string> {
  const { exchangeId } = await initiate(v, 'PASSWORD', requestId, { identifier: user.username });
  const data = dataOf<{ status_id: string }>(
    await verify(v, 'PASSWORD', { exchange_id: exchangeId, password: PASSWORD }),
  );
  return data.status_id;
}

export interface TestUser {
  id: string;
  username: string;
  phone: string;
  email: string;
}

let serial = 0;

/** A fresh user (unique name, phone and email) with PASSWORD enrolled. */
export async function passwordUser(v: VerificationApp, prefix = 'user'): Promise<TestUser> {
  serial += 1;
  const username = `${prefix}${serial}x${process.pid}`;
  const phone = `+1555${String(process.pid % 1000).padStart(3, '0')}${String(serial).padStart(4, '0')}`;
  const email = `${username}@example.test`;
  const id = await v.user(username, { phone, email });
  await enrolPassword(v, id);
  return { id, username, phone, email };
}

// ─────────────── fixtures shared with the server (the same module instances) ───────────────

export interface SentMessage {
  kind: string;
  to: string;
  subject?: string;
  text: string;
}

export interface ScriptedVerdict {
  next: { action: 'allow' | 'step_up' | 'deny'; reason?: string; retryAfter?: number };
  throws: boolean;
  hang: boolean;
  calls: { phase: string; method: string; userId: string }[];
}

export const SCRIPTED_FDS = path.join(FIXTURES, 'scripted-fds.js');
export const CAPTURE_CHANNEL = path.join(FIXTURES, 'capture-channel.js');

export async function sentMessages(): Promise<SentMessage[]> {
  return ((await import(CAPTURE_CHANNEL)) as { sent: SentMessage[] }).sent;
}

export async function scriptedVerdict(): Promise<ScriptedVerdict> {
  return ((await import(SCRIPTED_FDS)) as { verdict: ScriptedVerdict }).verdict;
}

/** Puts the scripted FDS rule back to "allow" and forgets its calls. */
export async function resetVerdict(): Promise<ScriptedVerdict> {
  const verdict = await scriptedVerdict();
  verdict.next = { action: 'allow' };
  verdict.throws = false;
  verdict.hang = false;
  verdict.calls.length = 0;
  return verdict;
}

/** Completes stage 1 with PASSWORD and continues the login, so the flow is at stage 2 and bound to the user. */
export async function atStageTwo(v: VerificationApp, user: TestUser, clientId = 'app1'): Promise<string> {
  const requestId = await v.flow(clientId);
  const statusId = await passwordStage(v, requestId, user);
  const next = dataOf<Continued>(await continueLogin(v, { requestId, status_id: statusId }));
  expect(next.completed).to.equal(false);
  return requestId;
}

/** The code in the latest message (of `kind`, if given) sent to `to`; spelled-out digits are joined. */
export async function lastCodeTo(to: string, kind?: string): Promise<string> {
  const message = (await sentMessages()).filter((m) => m.to === to && (!kind || m.kind === kind)).at(-1);
  expect(message, `no message to ${to}`).to.not.equal(undefined);
  const code = /\b(\d{6,10})\b/.exec(message!.text.replace(/(\d), (?=\d)/g, '$1'))?.[1];
  expect(code, 'no code in the message').to.be.a('string');
  return code!;
}

/** A six-digit code different from `code`. */
export function otherCode(code: string): string {
  return code === '000000' ? '111111' : '000000';
}
