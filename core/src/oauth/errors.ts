import { OAUTH_ERROR_STATUS } from '@gatehouse-auth/plugin-api';
import { ProtocolError } from '../errors.js';

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
