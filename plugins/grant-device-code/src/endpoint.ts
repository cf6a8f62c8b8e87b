import type { Request, Response } from 'express';
import { defineRoute, OAuthError, z, type OAuthClient, type Services, type WebApi } from '@gatehouse-auth/core';
import { displayUserCode, newUserCode } from './codes.js';
import { DEVICE_CODE_GRANT } from './grant.js';
import type { DeviceGrants } from './store.js';

/** RFC 6749 §3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

const optional = (description: string) => z.string().optional().meta({ description });

/** POST {mount}/device_authorization, as /openapi.json shows it (paths relative to the mount). */
export const deviceAuthorizationRoute = defineRoute({
  id: 'deviceAuthorization',
  method: 'post',
  path: '/device_authorization',
  tag: 'oauth',
  summary: 'Device authorization endpoint (RFC 8628 §3.1)',
  description:
    'The client authenticates as at the token endpoint (a public client by its client_id) and must have the grant type urn:ietf:params:oauth:grant-type:device_code. Only hashes of the codes are stored.',
  security: ['clientBasic', 'clientPost'],
  body: z
    .object({
      scope: optional('a subset of the client’s scopes; default: all of them'),
      client_id: optional('the client; required for public clients and with client_secret_post'),
      client_secret: optional('client_secret_post'),
      client_assertion: optional('private_key_jwt or client_secret_jwt: the signed JWT'),
      client_assertion_type: optional('urn:ietf:params:oauth:client-assertion-type:jwt-bearer'),
    })
    .catchall(z.string()),
  bodyTypes: ['application/x-www-form-urlencoded'],
  errorStyle: 'oauth',
  response: {
    description: 'the codes (RFC 8628 §3.2)',
    schema: z.object({
      device_code: z.string(),
      user_code: z.string().meta({ description: 'eight consonants, shown as XXXX-XXXX' }),
      verification_uri: z.string(),
      verification_uri_complete: z.string(),
      expires_in: z.number().int(),
      interval: z.number().int(),
    }),
  },
  errors: [
    'invalid_request',
    'invalid_client',
    { code: 'invalid_client', status: 429, description: 'too many failed client authentications; retry later' },
    'unauthorized_client',
    'invalid_scope',
  ],
});

/**
 * A form's parameters as RFC 6749 §3.2 reads them: a repeated one is invalid_request, an empty
 * one is absent.
 */
export function formParams(body: unknown): Record<string, string> {
  const params: Record<string, string> = {};
  if (typeof body !== 'object' || body === null) return params;
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value)) throw new OAuthError('invalid_request', `${key} is repeated`);
    if (typeof value === 'string' && value !== '') params[key] = value;
  }
  return params;
}

/** The requested scope within the client's (all of them when none is asked for). */
export function requestedScope(client: OAuthClient, requested: string | undefined): string[] {
  if (requested === undefined) return [...new Set(client.scopes)];
  const parts = requested.split(' ').filter(Boolean);
  if (parts.length === 0 || parts.some((p) => !SCOPE_TOKEN.test(p))) {
    throw new OAuthError('invalid_scope', 'malformed scope');
  }
  const excess = parts.filter((p) => !client.scopes.includes(p));
  if (excess.length) throw new OAuthError('invalid_scope', `scope not allowed: ${excess.join(' ')}`);
  return [...new Set(parts)];
}

export interface EndpointOptions {
  expiresIn: number;
  interval: number;
  /** The user code page's public URL. */
  verificationUri: string;
}

/** The device authorization request (RFC 8628 §3.1) and its response (§3.2). */
export function deviceAuthorization(
  web: WebApi,
  grants: DeviceGrants,
  services: Pick<Services, 'clock' | 'crypto'>,
  options: EndpointOptions,
) {
  return async (req: Request, res: Response): Promise<void> => {
    const params = formParams(req.body);
    const client = await web.authenticateClient(req, params);
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT)) {
      throw new OAuthError('unauthorized_client', `the client may not use ${DEVICE_CODE_GRANT}`);
    }
    const scope = requestedScope(client, params.scope);
    const deviceCode = services.crypto.randomToken(32);
    const device = grants.deviceKey(deviceCode);
    const expiresAt = services.clock.now().getTime() + options.expiresIn * 1000;
    // 20^8 codes: a collision with a live one is rare; draw again then.
    for (let attempt = 0; attempt < 5; attempt++) {
      const userCode = newUserCode();
      const request = {
        clientId: client.clientId,
        clientName: client.name,
        scope,
        expiresAt,
        interval: options.interval,
        userKey: grants.userKey(userCode),
      };
      if (!(await grants.create(device, request, options.expiresIn))) continue;
      const shown = displayUserCode(userCode);
      res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json({
        device_code: deviceCode,
        user_code: shown,
        verification_uri: options.verificationUri,
        verification_uri_complete: `${options.verificationUri}?user_code=${shown}`,
        expires_in: options.expiresIn,
        interval: options.interval,
      });
      return;
    }
    throw new Error('device authorization: no free user code after 5 draws');
  };
}
