/**
 * A software WebAuthn authenticator (plus the client half of the browser) for API tests of the
 * FIDO2 method's JSON path, written from WebAuthn Level 3 (https://www.w3.org/TR/webauthn-3/):
 * `register` plays navigator.credentials.create and `authenticate` plays navigator.credentials.get,
 * taking the options JSON the server sends and returning the response JSON the browser would post.
 *
 * It attests with "none" only. Flags are reported as configured rather than enforced (a
 * `userVerification: 'required'` request still gets UV=0 when `userVerified` is false), so tests
 * can check that the server rejects them. The `over` argument of each call shapes only the
 * emitted response (a lying client or authenticator); the stored credentials are not changed by it.
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

export type SoftAlg = 'ES256' | 'EdDSA' | 'RS256';

export interface SoftCredential {
  /** Credential ID, base64url. */
  id: string;
  /** user.id from the creation options (base64url); kept only for discoverable credentials. */
  userHandle: string | undefined;
  rpId: string;
  alg: SoftAlg;
  /** Signature counter of the last response. */
  counter: number;
  privateKey: KeyObject;
}

export interface SoftAuthenticatorOptions {
  origin: string;
  /** Default: the origin's hostname. */
  rpId?: string;
  /** Forces the algorithm; otherwise the first of options.pubKeyCredParams supported here. */
  alg?: SoftAlg;
  userVerified?: boolean;
  userPresent?: boolean;
  backupEligible?: boolean;
  backedUp?: boolean;
  /** Default: 16 zero bytes, as a "none" attestation conveys. */
  aaguid?: Buffer;
}

/** COSE algorithm identifiers (IANA "COSE Algorithms"). */
const COSE_ALG: Record<SoftAlg, number> = { ES256: -7, EdDSA: -8, RS256: -257 };

// Authenticator data flags (WebAuthn §6.1).
const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;

const b64u = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');
const fromB64u = (s: string): Buffer => Buffer.from(s, 'base64url');
const sha256 = (data: string | Uint8Array): Buffer => createHash('sha256').update(data).digest();

/** A DOMException like the browser's, so tests can check `name` (InvalidStateError, ...). */
const domError = (name: string, message: string): DOMException => new DOMException(message, name);

/** The credential public key as a COSE_Key (RFC 9053), from the key's JWK form. */
function coseKey(alg: SoftAlg, privateKey: KeyObject): Uint8Array {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const bytes = (v: string | undefined): Uint8Array => fromB64u(v ?? '');
  // Insertion order 1, 3, -1, -2, -3 is already CTAP2 canonical CBOR order.
  const key = new Map<number, CBORType>([
    [1, { ES256: 2, EdDSA: 1, RS256: 3 }[alg]], // kty: EC2, OKP, RSA
    [3, COSE_ALG[alg]],
  ]);
  if (alg === 'ES256') key.set(-1, 1).set(-2, bytes(jwk.x)).set(-3, bytes(jwk.y)); // crv P-256
  if (alg === 'EdDSA') key.set(-1, 6).set(-2, bytes(jwk.x)); // crv Ed25519
  if (alg === 'RS256') key.set(-1, bytes(jwk.n)).set(-2, bytes(jwk.e));
  return encodeCBOR(key);
}

function generateKey(alg: SoftAlg): KeyObject {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519').privateKey;
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

interface Flags {
  userPresent?: boolean;
  userVerified?: boolean;
  backupEligible?: boolean;
  backedUp?: boolean;
}

/** A platform credential's JSON around an authenticator response (registration or assertion). */
function asCredential<R>(id: string, response: R) {
  return {
    id,
    rawId: id,
    type: 'public-key' as const,
    authenticatorAttachment: 'platform' as const,
    clientExtensionResults: {},
    response,
  };
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  private readonly origin: string;
  private readonly rpId: string;
  private readonly aaguid: Buffer;

  constructor(private readonly opts: SoftAuthenticatorOptions) {
    this.origin = opts.origin;
    this.rpId = opts.rpId ?? new URL(opts.origin).hostname;
    this.aaguid = opts.aaguid ?? Buffer.alloc(16);
    if (this.aaguid.length !== 16) throw new TypeError('aaguid must be 16 bytes');
  }

  async register(
    options: PublicKeyCredentialCreationOptionsJSON,
    over: Flags & {
      origin?: string;
      rpId?: string;
      alg?: SoftAlg;
      type?: string;
      counter?: number;
      /** Register this credential id again (a cloned or shared key), with a fresh key pair. */
      credentialId?: string;
    } = {},
  ): Promise<RegistrationResponseJSON> {
    const rpId = options.rp.id ?? this.rpId;
    this.checkRpId(rpId);
    // authenticatorMakeCredential (§6.3.2): an excluded credential already here means "you are registered".
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.credentials.some((c) => c.rpId === rpId && excluded.has(c.id))) {
      throw domError('InvalidStateError', 'A credential in excludeCredentials is on this authenticator');
    }
    const alg = over.alg ?? this.opts.alg ?? this.pickAlg(options);
    // Effective residentKey (§5.4.4); 'discouraged' gets a server-side credential, which keeps no user handle.
    const sel = options.authenticatorSelection;
    const residentKey = sel?.residentKey ?? (sel?.requireResidentKey ? 'required' : 'discouraged');
    const discoverable = residentKey !== 'discouraged';
    const id = over.credentialId ? Buffer.from(over.credentialId, 'base64url') : randomBytes(16);
    const cred: SoftCredential = {
      id: b64u(id),
      userHandle: discoverable ? options.user.id : undefined,
      rpId,
      alg,
      counter: over.counter ?? 0,
      privateKey: generateKey(alg),
    };

    const cose = coseKey(alg, cred.privateKey);
    // attestedCredentialData = aaguid ‖ credentialIdLength (uint16 BE) ‖ credentialId ‖ COSE key.
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    const attested = Buffer.concat([this.aaguid, idLen, id, cose]);
    const authData = this.authData(over.rpId ?? rpId, AT | this.flags(over), cred.counter, attested);
    // "none" attestation: empty attStmt, and keys in canonical order fmt, attStmt, authData.
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientDataJSON = this.clientData(over.type ?? 'webauthn.create', options.challenge, over.origin);
    this.credentials.push(cred);
    return asCredential(cred.id, {
      clientDataJSON: b64u(clientDataJSON),
      attestationObject: b64u(attestationObject),
      authenticatorData: b64u(authData),
      transports: ['internal'],
      publicKeyAlgorithm: COSE_ALG[alg],
      publicKey: b64u(createPublicKey(cred.privateKey).export({ format: 'der', type: 'spki' })),
    });
  }

  async authenticate(
    options: PublicKeyCredentialRequestOptionsJSON,
    over: Flags & {
      credentialId?: string;
      counter?: number;
      origin?: string;
      rpId?: string;
      type?: string;
      challenge?: string;
    } = {},
  ): Promise<AuthenticationResponseJSON> {
    const rpId = options.rpId ?? this.rpId;
    this.checkRpId(rpId);
    const cred = this.pickCredential(rpId, options, over.credentialId);
    const counter = over.counter ?? cred.counter + 1;
    if (over.counter === undefined) cred.counter = counter;

    const authData = this.authData(over.rpId ?? cred.rpId, this.flags(over), counter);
    const clientDataJSON = this.clientData(
      over.type ?? 'webauthn.get',
      over.challenge ?? options.challenge,
      over.origin,
    );
    // authenticatorGetAssertion (§6.3.3): the assertion signature covers authenticatorData ‖ SHA-256(clientDataJSON).
    const signed = Buffer.concat([authData, sha256(clientDataJSON)]);
    // EdDSA hashes internally (null digest); ES256 gives DER, RS256 PKCS#1 v1.5 by node's default.
    const signature = sign(cred.alg === 'EdDSA' ? null : 'sha256', signed, cred.privateKey);
    return asCredential(cred.id, {
      clientDataJSON: b64u(clientDataJSON),
      authenticatorData: b64u(authData),
      signature: b64u(signature),
      ...(cred.userHandle === undefined ? {} : { userHandle: cred.userHandle }),
    });
  }

  /** The client's check in create() and get() (§5.1.3, §5.1.4): the RP ID is the origin's host or a suffix. */
  private checkRpId(rpId: string): void {
    const host = new URL(this.origin).hostname;
    if (host !== rpId && !host.endsWith(`.${rpId}`)) {
      throw domError('SecurityError', `RP ID ${rpId} is not valid for origin ${this.origin}`);
    }
  }

  /** First requested algorithm supported here; an empty list means ES256 and RS256 (§5.1.3). */
  private pickAlg(options: PublicKeyCredentialCreationOptionsJSON): SoftAlg {
    if (options.pubKeyCredParams.length === 0) return 'ES256';
    const ours = Object.entries(COSE_ALG) as [SoftAlg, number][];
    for (const { type, alg } of options.pubKeyCredParams) {
      const match = ours.find(([, id]) => type === 'public-key' && id === alg);
      if (match) return match[0];
    }
    throw domError('NotSupportedError', 'None of the requested pubKeyCredParams algorithms is supported');
  }

  /** A credential from allowCredentials, or, when that is empty, the newest discoverable one. */
  private pickCredential(
    rpId: string,
    options: PublicKeyCredentialRequestOptionsJSON,
    forcedId: string | undefined,
  ): SoftCredential {
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const cred = forcedId
      ? this.credentials.find((c) => c.id === forcedId)
      : this.credentials.findLast(
          (c) => c.rpId === rpId && (allowed.length > 0 ? allowed.includes(c.id) : c.userHandle !== undefined),
        );
    if (!cred) throw domError('NotAllowedError', 'No credential on this authenticator matches the request');
    return cred;
  }

  private flags(over: Flags): number {
    const on = (key: keyof Flags, bit: number, dflt: boolean): number =>
      (over[key] ?? this.opts[key] ?? dflt) ? bit : 0;
    return (
      on('userPresent', UP, true) |
      on('userVerified', UV, true) |
      on('backupEligible', BE, false) |
      on('backedUp', BS, false)
    );
  }

  /** authenticatorData = SHA-256(rpId) ‖ flags ‖ signCount (uint32 BE) ‖ [attestedCredentialData]. */
  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const head = Buffer.alloc(5);
    head.writeUInt8(flags, 0);
    head.writeUInt32BE(counter, 1);
    return Buffer.concat([sha256(rpId), head, ...(attested ? [attested] : [])]);
  }

  /** CollectedClientData serialised as §5.8.1.1 lays it out (type, challenge, origin, crossOrigin). */
  private clientData(type: string, challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }
}
