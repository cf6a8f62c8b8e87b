/**
 * Every OAuth error code Gatehouse answers with, and its usual status. In the contract because
 * plugins name these codes (a grant's `errors`, a route's `ErrorRef`) and the contract checks
 * that a code named without its status is one of them.
 */
export const OAUTH_ERROR_STATUS: Readonly<Record<string, number>> = Object.freeze({
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  access_denied: 403,
  unsupported_response_type: 400,
  unsupported_token_type: 400,
  login_required: 400,
  consent_required: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  slow_down: 429,
  // RFC 8628 §3.5 (the device grant's polling; its slow_down is a 400 there).
  authorization_pending: 400,
  expired_token: 400,
  // RFC 9449 (DPoP) §5, §8: the token binding's refusals at the token endpoint.
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
});
