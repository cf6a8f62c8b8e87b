import { generate } from 'otplib';

/** Alice as the walkthrough signs her in. */
export const ALICE = {
  username: 'alice',
  email: 'alice@example.test',
  phone: '+15551230000',
  password: 'correct horse battery staple',
};

export interface ProvisionedAlice {
  id: string;
  /** For an authenticator app (otpauth URI) and for `gatehouse-demo` to compute codes. */
  totpSecret: string;
  otpauthUri: string;
  backupCodes: string[];
}

/** One call to the admin API of the demo server; a failure stops the demo with its answer. */
async function adminCall(issuer: string, token: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${issuer}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data ?? {};
}

/**
 * Creates alice through the admin API, as an operator would: the user, her password, TOTP and
 * ten backup codes. The TOTP setup is confirmed with the previous time step's code (accepted in
 * the ±1 step window), so the current code stays free for her first sign-in.
 */
export async function provisionAlice(issuer: string, adminToken: string): Promise<ProvisionedAlice> {
  const call = (path: string, body: unknown) => adminCall(issuer, adminToken, path, body);
  const user = await call('/admin/users', { username: ALICE.username, email: ALICE.email, phone: ALICE.phone });
  const sub = String(user.id);
  const setup = (method: string, step: string, body: Record<string, unknown> = {}) =>
    call(`/verification-actions-srv/setup/${method}/${step}`, { sub, ...body });
  await setup('PASSWORD', 'initiation', { password: ALICE.password });
  const totp = await setup('TOTP', 'initiation');
  const totpSecret = String(totp.secret);
  await setup('TOTP', 'verification', { pass_code: await totpCode(totpSecret, -1) });
  const backup = await setup('BACKUPCODE', 'initiation');
  return {
    id: sub,
    totpSecret,
    otpauthUri: String(totp.otpauth_uri),
    backupCodes: (backup.codes as string[] | undefined) ?? [],
  };
}

/** The TOTP code of `secret` now, or `steps` time steps (30 s) away. */
export function totpCode(secret: string, steps = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
}
