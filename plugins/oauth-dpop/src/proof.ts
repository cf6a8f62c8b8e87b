import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { OAuthError, type BindingRequest, type RecordStore, type Services } from '@gatehouse-auth/core';
import type { Nonces } from './nonces.js';

/** Members of a private (or symmetric) JWK: a proof's `jwk` must carry none of them (RFC 9449 §4.3). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** Longest proof taken (a 4096-bit RSA key's proof is under 2 KB). */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;

export interface ProofRules {
  /** The `alg`s accepted: asymmetric only (the options refuse `none` and HS*). */
  algorithms: readonly string[];
  /** How old a proof's `iat` may be, in seconds. */
  iatWindow: number;
  /** How far clocks may disagree, in seconds (a proof from the near future, an old one at the edge). */
  clockSkew: number;
  /** Server nonces, when the operator asks for them. */
  nonces: Nonces | null;
}

/** Where a proof is checked: the token endpoint (400s) or a protected resource (401s with a challenge). */
export type ProofSite = 'token' | 'resource';

export interface CheckedProof {
  /** The JWK SHA-256 thumbprint of the proof's key (RFC 7638). */
  jkt: string;
  /** Headers for the answer: a fresh `DPoP-Nonce` when nonces are on. */
  headers: Record<string, string>;
}

/**
 * RFC 9449 §4.3: checks the request's one `DPoP` header — a JWT of type `dpop+jwt`, signed with
 * an allowed asymmetric `alg` by the public key in its `jwk`, whose `htm` and `htu` name this
 * request, whose `iat` is recent, whose `jti` was never seen (across nodes: the plugin's records
 * in the database), with the server's nonce when nonces are on, and at a resource with `ath`,
 * the hash of the access token.
 */
export function proofChecker(rules: ProofRules, records: RecordStore, services: Pick<Services, 'clock' | 'crypto'>) {
  const refuse = (
    site: ProofSite,
    description: string,
    code = 'invalid_dpop_proof',
    headers: Record<string, string> = {},
  ) => {
    if (site === 'token') return new OAuthError(code, description, 400, headers);
    const algs = rules.algorithms.join(' ');
    const challenge = `DPoP error="${code}", error_description="${description}", algs="${algs}"`;
    return new OAuthError(code, description, 401, { ...headers, 'WWW-Authenticate': challenge });
  };

  return async function check(req: BindingRequest, site: ProofSite, accessToken?: string): Promise<CheckedProof> {
    const header = req.headers.dpop;
    // Several headers arrive as a list, or joined with a comma (which no JWT contains).
    if (typeof header !== 'string' || header.includes(',')) throw refuse(site, 'exactly one DPoP header is required');
    if (header.length > MAX_PROOF_LENGTH) throw refuse(site, 'the DPoP proof is too long');
    let protectedHeader: ReturnType<typeof decodeProtectedHeader>;
    try {
      protectedHeader = decodeProtectedHeader(header);
    } catch {
      throw refuse(site, 'the DPoP proof is not a JWT');
    }
    const { typ, alg, jwk } = protectedHeader;
    if (typ !== 'dpop+jwt') throw refuse(site, 'the DPoP proof must have typ dpop+jwt');
    if (typeof alg !== 'string' || !rules.algorithms.includes(alg)) {
      throw refuse(site, `the DPoP proof alg must be one of ${rules.algorithms.join(', ')}`);
    }
    if (!jwk || typeof jwk !== 'object' || jwk.kty === 'oct' || PRIVATE_MEMBERS.some((m) => m in jwk)) {
      throw refuse(site, 'the DPoP proof must carry a public key in jwk');
    }
    let payload: Record<string, unknown>;
    try {
      const key = await importJWK(jwk as JWK, alg);
      ({ payload } = await jwtVerify(header, key, {
        typ: 'dpop+jwt',
        algorithms: [...rules.algorithms],
        currentDate: services.clock.now(),
      }));
    } catch {
      throw refuse(site, 'the DPoP proof signature or key is invalid');
    }
    const { jti, htm, htu, iat } = payload;
    if (typeof jti !== 'string' || !jti || jti.length > MAX_JTI_LENGTH || typeof htm !== 'string') {
      throw refuse(site, 'the DPoP proof lacks jti or htm');
    }
    if (htm !== req.method) throw refuse(site, 'the DPoP proof htm does not match the request method');
    if (typeof htu !== 'string' || withoutQuery(htu) !== withoutQuery(req.url)) {
      throw refuse(site, 'the DPoP proof htu does not match the request URL');
    }
    const now = Math.floor(services.clock.now().getTime() / 1000);
    if (typeof iat !== 'number' || iat > now + rules.clockSkew || iat < now - rules.iatWindow - rules.clockSkew) {
      throw refuse(site, 'the DPoP proof iat is outside the accepted window');
    }
    if (accessToken !== undefined && payload.ath !== services.crypto.sha256(accessToken)) {
      throw refuse(site, 'the DPoP proof ath does not match the access token');
    }
    const headers: Record<string, string> = {};
    if (rules.nonces) {
      const current = rules.nonces.current();
      headers['DPoP-Nonce'] = current;
      if (typeof payload.nonce !== 'string' || !rules.nonces.accepts(payload.nonce)) {
        throw refuse(site, 'the DPoP proof must carry the server nonce', 'use_dpop_nonce', headers);
      }
    }
    const jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256');
    // Single use on every node: the first to add the record wins, until the proof would be stale anyway.
    const ttlSeconds = rules.iatWindow + 2 * rules.clockSkew;
    if (!(await records.add(`jti:${services.crypto.sha256(`${jkt}:${jti}`)}`, {}, { ttlSeconds }))) {
      throw refuse(site, 'the DPoP proof was used already (jti)');
    }
    return { jkt, headers };
  };
}

/** RFC 9449 §4.3 step 9: the URL without query and fragment, normalised (case, default port). */
function withoutQuery(url: string): string | null {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return null;
  }
}
