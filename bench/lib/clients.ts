/** Clients, secrets and names shared by the bench driver and both servers, so both see the same load. */

/** client_credentials, JWT (ES256) access tokens. */
export const JWT_CLIENT = { id: 'bench-jwt', secret: 'bench-jwt-secret-0123456789abcdef0123456789' };
/** client_credentials, opaque access tokens; also the introspecting client. */
export const OPAQUE_CLIENT = { id: 'bench-opaque', secret: 'bench-opaque-secret-0123456789abcdef012345' };
/** Authorization code + PKCE, login [[PASSWORD]], JWT access token and ID token. */
export const CODE_CLIENT = { id: 'bench-code', secret: 'bench-code-secret-0123456789abcdef01234567' };
/** Authorization code, login [[TOTP]] (Gatehouse only: the TOTP scenario's login flows). */
export const TOTP_CLIENT = { id: 'bench-totp', secret: 'bench-totp-secret-0123456789abcdef01234567' };
/** Authorization code + PKCE, login [[PASSWORD], [TOTP]] (Gatehouse only: whole logins, scenario j). */
export const LOGIN_CLIENT = { id: 'bench-login', secret: 'bench-login-secret-0123456789abcdef0123456' };

export const REDIRECT_URI = 'http://127.0.0.1:9/cb';
/** The API scope every token carries; on the peer it belongs to a resource server. */
export const API_SCOPE = 'api:read';
/** Resource indicators of the peer (RFC 8707): one per token format. */
export const JWT_RESOURCE = 'urn:gatehouse-bench:jwt';
export const OPAQUE_RESOURCE = 'urn:gatehouse-bench:opaque';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789abcdef';
export const PASSWORD = 'bench password that is long enough 42';

/** RFC 6749 §2.3.1: id and secret are form-encoded, then Base64. */
export function basicAuth(client: { id: string; secret: string }): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(client.id)}:${enc(client.secret)}`).toString('base64')}`;
}
