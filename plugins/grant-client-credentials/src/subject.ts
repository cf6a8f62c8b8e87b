import { OAuthError, z, type OAuthClient } from '@gatehouse-auth/core';

/** `apps[i].service_subjects`: whom the client may act for (a key this plugin adds to apps). */
export const serviceSubjectsConfig = z
  .strictObject({ enterprise: z.array(z.string().min(1)).default([]), user: z.boolean().default(false) })
  .default({ enterprise: [], user: false });

export type ServiceSubjects = z.output<typeof serviceSubjectsConfig>;

/** The client's `service_subjects` (none when its app has no such key: a test's bare client). */
export function serviceSubjectsOf(client: OAuthClient): ServiceSubjects {
  return (client.settings.service_subjects as ServiceSubjects | undefined) ?? { enterprise: [], user: false };
}

export const SERVICE_SUBJECT_TYPES = ['enterprise', 'user'] as const;
export type ServiceSubjectType = (typeof SERVICE_SUBJECT_TYPES)[number];

/** On whose behalf the client asks: an enterprise or a user it was configured for. */
export interface ServiceSubject {
  type: ServiceSubjectType;
  id: string;
}

/** Printable ASCII, as ids become the token's `sub` or a claim. */
const SUBJECT_ID = /^[\x21-\x7e]{1,255}$/;

const isSubjectType = (value: string): value is ServiceSubjectType =>
  (SERVICE_SUBJECT_TYPES as readonly string[]).includes(value);

/**
 * Reads `service_subject_type` / `service_subject_id` and checks the client was configured to act
 * for that subject (`service_subjects` in its app config). Neither parameter: the client acts for
 * itself (null). Malformed → invalid_request; not permitted → unauthorized_client.
 */
export function serviceSubjectOf(client: OAuthClient, params: Record<string, string>): ServiceSubject | null {
  const type = params.service_subject_type;
  const id = params.service_subject_id;
  if (type === undefined) {
    if (id !== undefined) throw new OAuthError('invalid_request', 'service_subject_id requires service_subject_type');
    return null;
  }
  if (!isSubjectType(type)) throw new OAuthError('invalid_request', 'service_subject_type must be enterprise or user');
  if (id === undefined) throw new OAuthError('invalid_request', 'service_subject_id is required');
  if (!SUBJECT_ID.test(id)) throw new OAuthError('invalid_request', 'service_subject_id is malformed');
  const allowed = serviceSubjectsOf(client);
  if (type === 'enterprise' && !allowed.enterprise.includes(id)) {
    throw new OAuthError('unauthorized_client', 'client may not act for this enterprise');
  }
  if (type === 'user' && !allowed.user) {
    throw new OAuthError('unauthorized_client', 'client may not act for users');
  }
  return { type, id };
}
