import type { OAuthClient } from './client.js';
import type { Confirmation } from './oauth.js';

/**
 * Since 1.3: a client policy (`api.clientPolicy`, decision 80): extra rules the apps it holds
 * must meet, which the core consults at fixed points of the OAuth endpoints (the idea of
 * Keycloak's client policies). Each hook answers the reason of a refusal (the
 * `error_description`), or nothing; the core answers it with the point's status and error code.
 * The first policy (in plugin order) that refuses decides. A policy only adds refusals: it
 * never lets through what the core would refuse.
 */
export interface ClientPolicy {
  /** Its name (`fapi2`), listed in `client.policies` of the apps it holds. One plugin per name. */
  name: string;
  /** Whether it holds the app: asked once per app, when the app is loaded (config or database). */
  appliesTo(client: OAuthClient): boolean;
  /**
   * The app entry's breaches of the policy, each with its key path (`['jwks', 'keys', 0]`):
   * start-up, `config check` and a stored app's write refuse the app with every one of them
   * (`apps[2].code_ttl: …`). `app` is the entry as parsed (the core's keys with their defaults);
   * `features`, what the loaded plugins provide that the policy may need.
   */
  appIssues?(client: OAuthClient, app: Readonly<Record<string, unknown>>, features: ServerFeatures): PolicyIssue[];
  /** JWS algorithms the app's `private_key_jwt` assertions may use (a subset of the core's). */
  assertionAlgorithms?: readonly string[];
  /**
   * /authorize, before the request is resolved: `pushed` when it comes as a `request_uri` a
   * plugin resolves (RFC 9126). A refusal is the error page, 400 `invalid_request`.
   */
  authorizationRequest?(client: OAuthClient, request: { pushed: boolean }): string | undefined;
  /**
   * The authorization request as validated (/authorize and a pushed request alike), with the
   * keys of `LoginFlowView.oauth` (`redirect_uri_sent`, `code_challenge`, …). A refusal is 400
   * `invalid_request`: the error page at /authorize, never a redirect.
   */
  authorizationParameters?(client: OAuthClient, request: Readonly<Record<string, unknown>>): string | undefined;
  /**
   * A verified client assertion's claims (RFC 7523), and the issuer as the server publishes it
   * (discovery's `issuer`: config `issuer` as written, a trailing slash kept, unlike `web.issuer`).
   * A refusal is 401 `invalid_client`.
   */
  clientAssertion?(
    client: OAuthClient,
    claims: { aud?: string | string[]; iat?: number },
    issuer: string,
  ): string | undefined;
  /**
   * A token request, authenticated and its proofs checked, before the grant runs (nothing is
   * spent yet). A refusal is 400 `invalid_request`.
   */
  tokenRequest?(
    client: OAuthClient,
    request: { grantType: string; confirmation: Confirmation | null },
  ): string | undefined;
}

/** Since 1.3: one breach of a client policy by an app entry, with the key path it is about. */
export interface PolicyIssue {
  path: (string | number)[];
  message: string;
}

/** Since 1.3: what the loaded plugins provide, as a client policy's `appIssues` sees it. */
export interface ServerFeatures {
  /** A resolver of `request_uri` (pushed authorization requests, `api.authorizationRequests`). */
  authorizationRequests: boolean;
  /** The `cnf` members the token bindings fill (`jkt`: DPoP, `x5t#S256`: mutual TLS). */
  tokenBindings: readonly string[];
}
