import { definePlugin, OAuthError, z, type TokenBinding } from '@gatehouse-auth/core';
import { statelessNonces } from './nonces.js';
import { proofChecker } from './proof.js';

export { proofChecker, type CheckedProof, type ProofRules, type ProofSite } from './proof.js';
export { statelessNonces, type Nonces } from './nonces.js';

/** Asymmetric algorithms a proof may use; `none` and the HMAC ones are not among them (RFC 9449 §4.2). */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'RS256'] as const;

export const dpopOptions = z
  .strictObject({
    /** The `alg`s proofs may use (discovery's `dpop_signing_alg_values_supported`). */
    algorithms: z.array(z.enum(DPOP_ALGORITHMS)).min(1).default(['ES256', 'EdDSA', 'Ed25519']),
    /** How old a proof's `iat` may be, in seconds. */
    iat_window_seconds: z.number().int().min(5).max(600).default(60),
    /** How far the client's clock may be off, in seconds. */
    clock_skew_seconds: z.number().int().min(0).max(60).default(5),
    /** Server nonces (RFC 9449 §8, §9): proofs must carry the `DPoP-Nonce` the server hands out. */
    nonces: z.boolean().default(false),
    /** How often the nonce changes, in seconds (the previous one is still taken). */
    nonce_lifetime_seconds: z.number().int().min(10).max(3600).default(300),
  })
  .default({
    algorithms: ['ES256', 'EdDSA', 'Ed25519'],
    iat_window_seconds: 60,
    clock_skew_seconds: 5,
    nonces: false,
    nonce_lifetime_seconds: 300,
  });

export type DpopOptions = z.infer<typeof dpopOptions>;

/**
 * The app setting `dpop_bound_access_tokens` (RFC 9449 §5.2): when true, the app's token
 * requests must carry a proof; one without is refused with `invalid_dpop_proof`.
 */
export const dpopBoundConfig = z.boolean().default(false);

/**
 * @gatehouse-auth/oauth-dpop: DPoP (RFC 9449). A token request with a valid `DPoP` proof gets
 * tokens bound to the proof's key (`token_type: DPoP`, `cnf.jkt`); the core refuses them at
 * userinfo without a proof of that key, and refreshes a public client's refresh token only with
 * one (docs/decisions/0042).
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-dpop'
 *     options: { nonces: true }
 * apps:
 *   - client_id: spa
 *     token_endpoint_auth_method: none
 *     dpop_bound_access_tokens: true
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-dpop',
  apiVersion: '^1.3',
  options: dpopOptions,
  appConfig: { dpop_bound_access_tokens: dpopBoundConfig },
  register(api, options) {
    const { services } = api;
    const check = proofChecker(
      {
        algorithms: options.algorithms,
        iatWindow: options.iat_window_seconds,
        clockSkew: options.clock_skew_seconds,
        nonces: options.nonces ? statelessNonces(services, options.nonce_lifetime_seconds) : null,
      },
      api.records,
      services,
    );
    const binding: TokenBinding = {
      algorithms: options.algorithms,
      async tokenRequest(req) {
        if (req.headers.dpop === undefined) {
          if (dpopBoundConfig.parse(req.client.settings.dpop_bound_access_tokens)) {
            throw new OAuthError('invalid_dpop_proof', 'this app must send a DPoP proof (dpop_bound_access_tokens)');
          }
          return null;
        }
        const proof = await check(req, 'token');
        return { value: proof.jkt, headers: proof.headers };
      },
      async resourceRequest(req) {
        return (await check(req, 'resource', req.accessToken)).jkt;
      },
    };
    api.tokenBinding(binding);
    api.discovery({ dpop_signing_alg_values_supported: options.algorithms });
  },
});
