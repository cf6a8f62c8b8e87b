import { definePlugin, z, type OAuthClient } from '@gatehouse-auth/core';
import { REQUEST_OBJECT_ALGS, requestObjectVerifier } from './verify.js';

export { REQUEST_OBJECT_ALGS } from './verify.js';

/** The app key (and RFC 9101 §10.5 client metadata name) that makes an app sign every request. */
export const REQUIRE_SIGNED = 'require_signed_request_object';

export const jarOptions = z
  .strictObject({
    /** The JWS algorithms accepted (a subset of the asymmetric ones; never none, never HMAC). */
    algorithms: z
      .array(z.enum(REQUEST_OBJECT_ALGS as [string, ...string[]]))
      .min(1)
      .default(['RS256', 'PS256', 'ES256', 'EdDSA']),
    /** Every app must sign its authorization requests (RFC 9101 §10.5); per app: the app key. */
    require_signed_request_object: z.boolean().default(false),
    /** The longest a request object may live from now (its `exp`), in seconds. */
    max_lifetime_seconds: z.number().int().min(10).max(3600).default(3600),
    /** An object with a `jti` is used once: a replay is refused until it expires. */
    one_time_jti: z.boolean().default(true),
  })
  .default({
    algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    require_signed_request_object: false,
    max_lifetime_seconds: 3600,
    one_time_jti: true,
  });

/**
 * @gatehouse-auth/oauth-jar: signed authorization requests (JWT-Secured Authorization Request,
 * RFC 9101). An app with keys (`jwks` or `jwks_uri`) sends its request as a signed JWT in the
 * `request` parameter, at /authorize or in a pushed request (@gatehouse-auth/oauth-par); the
 * object's claims are then the whole request. An app with `require_signed_request_object: true`
 * (or every app, with the option of that name) may send only such requests. Unsigned and
 * encrypted objects, and `request_uri` pointing at a URL, stay refused.
 *
 * @example
 * plugins:
 *   - name: '@gatehouse-auth/oauth-jar'
 * apps:
 *   - client_id: bank
 *     jwks_uri: https://bank.example/jwks.json
 *     require_signed_request_object: true
 */
export default definePlugin({
  name: '@gatehouse-auth/oauth-jar',
  apiVersion: '^1.3',
  options: jarOptions,
  appConfig: { [REQUIRE_SIGNED]: z.boolean().default(false) },
  register(api, options) {
    const required = (client: OAuthClient) =>
      options.require_signed_request_object || client.settings[REQUIRE_SIGNED] === true;
    api.requestObjects({
      algorithms: options.algorithms,
      verify: requestObjectVerifier(api.web, api.records, api.services, {
        algorithms: options.algorithms,
        maxLifetime: options.max_lifetime_seconds,
        oneTimeJti: options.one_time_jti,
      }),
      required,
    });
    api.discovery({ require_signed_request_object: options.require_signed_request_object });
  },
});
