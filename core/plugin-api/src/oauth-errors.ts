import { ProtocolError } from './errors.js';

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

/** RFC 6749 §5.2: error_description may use only %x20-21 / %x23-5B / %x5D-7E. */
function safeDescription(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, ' ').slice(0, 300);
}

/**
 * An OAuth error (RFC 6749 §5.2): `{"error","error_description"}` with its status. A client
 * authentication failure carries `WWW-Authenticate: Basic`.
 */
export class OAuthError extends ProtocolError {
  constructor(
    code: string,
    description: string,
    status?: number,
    private readonly extraHeaders: Record<string, string> = {},
  ) {
    super(status ?? OAUTH_ERROR_STATUS[code] ?? 400, code, safeDescription(description));
  }
  override headers(): Record<string, string> {
    const base: Record<string, string> = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
    if (this.code === 'invalid_client' && this.status === 401) base['WWW-Authenticate'] = 'Basic realm="gatehouse"';
    if (this.code === 'invalid_token' || this.code === 'insufficient_scope') {
      base['WWW-Authenticate'] = `Bearer error="${this.code}", error_description="${this.message}"`;
    }
    // The caller's own challenge wins (DPoP's at userinfo).
    return { ...base, ...this.extraHeaders };
  }
  body(): unknown {
    return { error: this.code, error_description: this.message };
  }
}

export const oauthError = (code: string, description: string, status?: number) =>
  new OAuthError(code, description, status);
