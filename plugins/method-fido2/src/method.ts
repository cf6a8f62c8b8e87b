/**
 * FIDO2 / WebAuthn with @simplewebauthn/server: passkeys and security keys. The challenge lives
 * in the exchange (the core spends it with the exchange, so an assertion works once); the
 * signature counter is advanced atomically at commit (a counter that does not move forward is a
 * possible clone, refused and recorded); a credential id is registered to one user only.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type {
  AuthMethod,
  Credential,
  CredentialStore,
  EnrollmentOutcome,
  JsonObject,
  MethodContext,
  RecordStore,
  Services,
  VerifyContext,
  VerifyOutcome,
} from '@gatehouse-auth/core';
import { fido2AppOptions, type Fido2AppOptions, type Fido2Options } from './options.js';

/** Credential type of a registered passkey or security key. */
export const PASSKEY = 'passkey';
/** The verification field (the spec's name): the browser's response, as a JSON string. */
export const RESPONSE_FIELD = 'fido2_client_response';
const INDEX = 'credential:';

const require = createRequire(import.meta.url);
const PAGE_MODULE = fileURLToPath(new URL('../assets/page.js', import.meta.url));
// The package exports no path to its single-file bundle: found from its main entry (script/).
const BROWSER_LIBRARY = path.join(
  path.dirname(require.resolve('@simplewebauthn/browser')),
  '..',
  'dist',
  'bundle',
  'index.umd.min.js',
);

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const fromB64url = (text: string): Uint8Array<ArrayBuffer> => {
  const bytes = Buffer.from(text, 'base64url');
  return new Uint8Array(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
  ) as Uint8Array<ArrayBuffer>;
};

/** The browser's response from a JSON string, or null when it is not one. */
function parseResponse<T extends { id?: unknown; response?: unknown }>(raw: unknown): T | null {
  if (typeof raw === 'object' && raw !== null) return raw as T;
  if (typeof raw !== 'string' || raw.length > 65_536) return null;
  try {
    const parsed = JSON.parse(raw) as T;
    return parsed && typeof parsed.id === 'string' && typeof parsed.response === 'object' ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Backup state without backup eligibility is a contradiction (WebAuthn §6.1, flags BE/BS): an
 * authenticator that says so is not trusted.
 */
function inconsistentBackupFlags(authenticatorData: string): boolean {
  const flags = Buffer.from(authenticatorData, 'base64url')[32] ?? 0;
  return (flags & 0x10) !== 0 && (flags & 0x08) === 0;
}

interface StoredPasskey {
  credential: Credential;
  id: string;
  publicKey: Uint8Array<ArrayBuffer>;
  transports: AuthenticatorTransport[];
}

function passkeyOf(credential: Credential): StoredPasskey | null {
  const { credential_id: id, public_key: publicKey, transports } = credential.data;
  if (typeof id !== 'string' || typeof publicKey !== 'string') return null;
  return {
    credential,
    id,
    publicKey: fromB64url(publicKey),
    transports: Array.isArray(transports) ? (transports as AuthenticatorTransport[]) : [],
  };
}

async function passkeysOf(credentials: CredentialStore): Promise<StoredPasskey[]> {
  return (await credentials.list(PASSKEY)).map(passkeyOf).filter((p): p is StoredPasskey => p !== null);
}

const appOptionsOf = (ctx: { appOptions?: unknown }): Fido2AppOptions =>
  (ctx.appOptions as Fido2AppOptions | undefined) ?? fido2AppOptions.parse(undefined);

/** RFC 8176: a key that may live on several devices (a synced passkey) is a software key. */
function amrOf(info: { credentialDeviceType: string; credentialBackedUp: boolean; userVerified: boolean }) {
  const key = info.credentialDeviceType === 'multiDevice' || info.credentialBackedUp ? 'swk' : 'hwk';
  return info.userVerified ? [key, 'mfa'] : [key, 'user'];
}

export function fido2Method(options: Fido2Options, services: Services, records: RecordStore): AuthMethod {
  const refuse = (code: string, status: number, message: string) => ({ ok: false as const, code, status, message });

  /** Request options for an assertion; the challenge stays in the exchange. */
  const assertionOptions = async (allow: StoredPasskey[], userVerification: 'required' | 'preferred') => {
    const optionsJSON = await generateAuthenticationOptions({
      rpID: options.rp_id,
      allowCredentials: allow.map((p) => ({ id: p.id, transports: p.transports })),
      userVerification,
      timeout: options.timeout_ms,
    });
    return {
      ok: true as const,
      state: { challenge: optionsJSON.challenge, user_verification: userVerification },
      response: { fido2_options: optionsJSON as unknown as JsonObject },
    };
  };

  return {
    id: 'FIDO2',
    amr: ['hwk'],
    verifyFields: [RESPONSE_FIELD],
    appOptions: fido2AppOptions,
    page: {
      label: 'Passkey or security key',
      help: 'Use the passkey on this device, your phone or a security key.',
      inputs: [],
      module: PAGE_MODULE,
      moduleFiles: { 'simplewebauthn-browser.js': BROWSER_LIBRARY },
      offer: {
        title: 'Sign in faster next time',
        text: 'Create a passkey: next time, sign in with your fingerprint, face or screen lock instead of your password.',
        accept: 'Create a passkey',
      },
    },

    async isEnrolled(ctx: MethodContext) {
      return (await passkeysOf(ctx.credentials)).length > 0;
    },

    async initiate(ctx) {
      return assertionOptions(await passkeysOf(ctx.credentials), appOptionsOf(ctx).user_verification);
    },

    // No username: any passkey of this site, the browser asks which. It is the whole sign-in of
    // the stage, so it must be unlocked by the user (user verification).
    discoverable: {
      initiate: async () => assertionOptions([], 'required'),
      async identify(ctx) {
        const handle = parseResponse<AuthenticationResponseJSON>(ctx.fields[RESPONSE_FIELD])?.response?.userHandle;
        return typeof handle === 'string' ? Buffer.from(handle, 'base64url').toString('utf8') || null : null;
      },
    },

    async verify(ctx: VerifyContext): Promise<VerifyOutcome> {
      const response = parseResponse<AuthenticationResponseJSON>(ctx.fields[RESPONSE_FIELD]);
      if (!response) return { ok: false, reason: 'malformed_response' };
      const passkey = (await passkeysOf(ctx.credentials)).find((p) => p.id === response.id);
      if (!passkey) return { ok: false, reason: 'unknown_credential' };
      const handle = response.response.userHandle;
      if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== ctx.user.id)
        return { ok: false, reason: 'user_handle_mismatch' };
      if (inconsistentBackupFlags(response.response.authenticatorData)) return { ok: false, reason: 'backup_flags' };
      const challenge = ctx.state['challenge'];
      if (typeof challenge !== 'string') return { ok: false, reason: 'no_challenge' };
      const stored = passkey.credential.counter;
      let verified;
      try {
        verified = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge,
          expectedOrigin: options.origins,
          expectedRPID: options.rp_id,
          credential: { id: passkey.id, publicKey: passkey.publicKey, counter: stored, transports: passkey.transports },
          requireUserVerification: ctx.state['user_verification'] === 'required',
        });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (/counter/i.test(message)) return counterRegressed(ctx, passkey, stored);
        ctx.logger.info({ method: 'FIDO2', reason: message }, 'FIDO2 assertion refused');
        return { ok: false, reason: 'assertion_invalid' };
      }
      if (!verified.verified) return { ok: false, reason: 'assertion_invalid' };
      const info = verified.authenticationInfo;
      return {
        ok: true,
        amr: amrOf(info),
        // The counter moves forward once: of two requests with one assertion, one wins. An
        // authenticator without a counter (always 0) is single use through the challenge alone.
        commit: async () =>
          info.newCounter === 0 && stored === 0
            ? true
            : ctx.credentials.advanceCounter(passkey.credential.id, info.newCounter),
      };
    },

    enrollment: {
      async initiate(ctx) {
        const existing = await passkeysOf(ctx.credentials);
        const optionsJSON = await generateRegistrationOptions({
          rpName: options.rp_name,
          rpID: options.rp_id,
          userName: ctx.user.username ?? ctx.user.email ?? ctx.user.id,
          userID: new TextEncoder().encode(ctx.user.id) as Uint8Array<ArrayBuffer>,
          attestationType: options.attestation,
          excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
          authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
          supportedAlgorithmIDs: options.algorithms,
          timeout: options.timeout_ms,
        });
        const name = typeof ctx.body['name'] === 'string' ? ctx.body['name'].trim().slice(0, 64) : '';
        return {
          ok: true,
          pending: { challenge: optionsJSON.challenge, name },
          response: { fido2_options: optionsJSON as unknown as JsonObject },
        };
      },

      async verify(ctx): Promise<EnrollmentOutcome> {
        const response = parseResponse<RegistrationResponseJSON>(ctx.body[RESPONSE_FIELD]);
        const challenge = ctx.pending?.['challenge'];
        if (!response) return refuse('INVALID_FIELD', 400, `${RESPONSE_FIELD} must be the browser's response (JSON)`);
        if (typeof challenge !== 'string') return refuse('ENROLLMENT_NOT_STARTED', 400, 'start the registration first');
        if (inconsistentBackupFlags(response.response.authenticatorData ?? ''))
          return refuse('VERIFICATION_FAILED', 401, 'the authenticator data is inconsistent');
        let verified;
        try {
          verified = await verifyRegistrationResponse({
            response,
            expectedChallenge: challenge,
            expectedOrigin: options.origins,
            expectedRPID: options.rp_id,
            requireUserVerification: false,
            supportedAlgorithmIDs: options.algorithms,
          });
        } catch (err) {
          ctx.logger.info(
            { method: 'FIDO2', reason: err instanceof Error ? err.message : String(err) },
            'FIDO2 registration refused',
          );
          return refuse('VERIFICATION_FAILED', 401, 'the registration could not be verified');
        }
        if (!verified.verified || !verified.registrationInfo)
          return refuse('VERIFICATION_FAILED', 401, 'the registration could not be verified');
        const { credential, credentialDeviceType, credentialBackedUp, aaguid } = verified.registrationInfo;
        if (Buffer.from(credential.id, 'base64url').length > 1023)
          return refuse('INVALID_FIELD', 400, 'the credential id is too long');
        // One credential id, one user, decided by the store.
        if (!(await claimCredentialId(records, services, credential.id, ctx.user.id)))
          return refuse('CREDENTIAL_EXISTS', 409, 'this passkey is registered already');
        const name = typeof ctx.pending?.['name'] === 'string' && ctx.pending['name'] ? ctx.pending['name'] : 'Passkey';
        const added = await ctx.credentials.add({
          type: PASSKEY,
          label: name,
          counter: credential.counter,
          data: {
            credential_id: credential.id,
            public_key: b64url(credential.publicKey),
            transports: (credential.transports ?? []) as string[],
            device_type: credentialDeviceType,
            backed_up: credentialBackedUp,
            aaguid,
          },
        });
        return { ok: true, done: true, pending: null, response: { credential_id: added.id, name } };
      },
    },
  };

  async function counterRegressed(ctx: VerifyContext, passkey: StoredPasskey, stored: number): Promise<VerifyOutcome> {
    // A counter that did not move forward: the key may have been cloned (WebAuthn §6.1.1).
    await services.events.record({
      type: 'fido2.counter_regressed',
      userId: ctx.user.id,
      method: 'FIDO2',
      clientId: ctx.clientId,
      ip: ctx.request.ip,
      data: { credential: passkey.credential.id, stored },
    });
    ctx.logger.warn(
      { method: 'FIDO2', credential: passkey.credential.id },
      'FIDO2 counter went backwards: possible clone',
    );
    return { ok: false, reason: 'counter_regressed' };
  }
}

/**
 * Claims a credential id for a user across all users. An index entry whose owner no longer has
 * the credential (removed since) is taken over.
 */
async function claimCredentialId(records: RecordStore, services: Services, credentialId: string, userId: string) {
  const key = INDEX + credentialId;
  if (await records.add(key, { user_id: userId })) return true;
  const owner = (await records.get(key))?.data['user_id'];
  if (typeof owner !== 'string') return false;
  const stillThere = (await services.credentials(owner, 'FIDO2').list(PASSKEY)).some(
    (c) => c.data['credential_id'] === credentialId,
  );
  if (stillThere) return false;
  await records.put(key, { user_id: userId });
  return true;
}
