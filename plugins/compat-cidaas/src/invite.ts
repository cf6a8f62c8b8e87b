import { ApiError, defineRoute, verificationError, z, type RouteSpec, answerSuccess } from '@gatehouse-auth/core';
import { type RouteGroupInput } from './http.js';

/** The service the invitations plugin provides (`@gatehouse-auth/invitations`), as far as this call needs it. */
interface InvitationInfo {
  info(inviteId: string): Promise<Record<string, unknown> | null>;
}

const inviteId = z.object({ inviteId: z.string().meta({ description: 'the invitation id (invite_id)' }) });
const info = z.object({
  invite_id: z.string(),
  email: z.string().meta({ description: 'the invited address, masked (d***@example.com)' }),
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  client_id: z.string().nullable(),
  expires_at: z.string().meta({ format: 'date-time' }),
});
const spec = (id: string, path: string) =>
  defineRoute({
    id,
    method: 'get',
    path,
    tag: 'users',
    summary: 'What an invitation is (cidaas invite info): its status and the masked address; it authorises nothing',
    params: inviteId,
    response: { description: 'the invitation', schema: info },
    errors: [{ code: 'INVITATION_NOT_FOUND', status: 404, description: 'no such invitation' }, 'TOO_MANY_ATTEMPTS'],
  });

export const INVITE_API = {
  inviteInfo: spec('cidaasInviteInfo', '/users-srv/invite/info/:inviteId'),
  invitation: spec('cidaasInvitation', '/useractions-srv/invitations/:inviteId'),
} satisfies Record<string, RouteSpec>;

/**
 * cidaas's invitation details, `GET /users-srv/invite/info/{invite_id}` and the newer
 * `GET /useractions-srv/invitations/{invite_id}`, answered by the invitations plugin's service
 * (404 when it is not loaded, as for an unknown id). The id names an invitation and opens
 * nothing: the link's secret is another value, in the email only (decision 48).
 */
export function inviteRoutes({ api, router }: RouteGroupInput): RouteSpec[] {
  const perAddress = api.web.limit('invite-info', 60, 60);
  // An app's registration page asks by XHR from its origin (apps[i].allowed_origins).
  api.cors(['/users-srv/invite/', '/useractions-srv/invitations/']);
  for (const route of Object.values(INVITE_API)) {
    router.get(route.path, async (req, res) => {
      const wait = await perAddress.hit(api.web.clientIp(req));
      if (wait) {
        res.set('Retry-After', String(wait));
        throw verificationError('TOO_MANY_ATTEMPTS');
      }
      let service: InvitationInfo | null = null;
      try {
        service = api.services.resolve<InvitationInfo>('invitations');
      } catch {
        service = null;
      }
      const found = service ? await service.info(String(req.params.inviteId)) : null;
      if (!found) throw new ApiError(404, 'INVITATION_NOT_FOUND', 'no such invitation');
      answerSuccess(res, found);
    });
  }
  return Object.values(INVITE_API);
}
