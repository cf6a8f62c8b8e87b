import type { OAuthClient, Session } from '@gatehouse-auth/plugin-api';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { achievedAcr } from '../acr.js';
import { signInGrantData } from '../tokens.js';
import type { LoginFlow } from '../../verification/flows.js';
import type { AuthorizationRequest } from './request.js';
import type { AuthorizeContext } from './context.js';
import { authTimeOf } from './hosted-login.js';

/**
 * Issues the code (or the implicit token) once per flow and sends the browser back. The
 * session it came from is named in the grant (`sid`), and the app is recorded on it, so that
 * logging out reaches both.
 */
export async function finish(
  ctx: AuthorizeContext,
  res: Response,
  answer: { flow: LoginFlow; client: OAuthClient; request: AuthorizationRequest; session: Session | null },
  log: Logger,
): Promise<void> {
  const { flow, client, request, session } = answer;
  const { sessions, tokens } = ctx.deps;
  await ctx.end(res, flow);
  if (session) await sessions.addClient(session, client.clientId);
  const sid = session?.sid ?? null;
  const authTime = authTimeOf(flow, ctx.deps.clock.now());
  // The strongest authentication context this login met (the ID token's acr), if the app names any.
  const acr = achievedAcr(client, flow.methods);
  if (request.response_type === 'code') {
    const code = await tokens.createCode({
      clientId: client.clientId,
      subject: flow.userId!,
      redirectUri: request.redirect_uri,
      redirectUriSent: request.redirect_uri_sent !== false,
      scope: request.scope,
      codeChallenge: request.code_challenge,
      codeChallengeMethod: request.code_challenge_method,
      nonce: request.nonce,
      authTime,
      amr: flow.amr,
      sid,
      ttlSeconds: client.codeTtl,
      grantTtlSeconds: client.refreshTokenTtl,
      claims: request.claims ?? null,
      acr,
      dpopJkt: request.dpop_jkt ?? null,
    });
    log.info({ client: client.clientId }, 'authorization code issued');
    return ctx.respond(res, request, { code });
  }
  const issued = await tokens.issue({
    client,
    subject: flow.userId!,
    scope: request.scope,
    grantType: 'implicit',
    refreshToken: false,
    idToken: { nonce: request.nonce, authTime, amr: flow.amr },
    grantData: signInGrantData({ authTime, amr: flow.amr, sid, claims: request.claims, acr }),
  });
  log.info({ client: client.clientId }, 'implicit access token issued');
  ctx.respond(res, request, {
    access_token: issued.access_token,
    token_type: issued.token_type,
    expires_in: String(issued.expires_in),
    scope: issued.scope,
    ...(issued.id_token ? { id_token: issued.id_token } : {}),
  });
}
