import { OAuthError, z, type OAuthClient } from '@gatehouse-auth/core';

const invalidTarget = (description: string) => new OAuthError('invalid_target', description);

/** RFC 8707 §2: a resource is an absolute URI without a fragment. */
function isResourceUri(value: string): boolean {
  if (value.includes('#')) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The audience of the new token: `resource` and `audience` (RFC 8693 §2.1), each one the client's
 * config lists in `audiences` (exact match, no normalisation). Undefined when neither was sent, so
 * the core's default (the client id) applies. The core refuses repeated parameters, so there is
 * at most one of each.
 */
/** `apps[i].audiences`: the resources an app may request tokens for (a key this plugin adds to apps). */
export const audiencesConfig = z.array(z.string().min(1)).default([]);

/** The client's permitted audiences (none when its app names none). */
export function audiencesOf(client: OAuthClient): string[] {
  return (client.settings.audiences as string[] | undefined) ?? [];
}

export function resolveAudience(
  client: OAuthClient,
  params: { resource?: string; audience?: string },
): string[] | undefined {
  const { resource, audience } = params;
  if (resource !== undefined && !isResourceUri(resource)) {
    throw invalidTarget('resource must be an absolute URI without a fragment');
  }
  const targets = [resource, audience].filter((t): t is string => t !== undefined);
  if (targets.length === 0) return undefined;
  const audiences = audiencesOf(client);
  if (targets.some((t) => !audiences.includes(t))) {
    throw invalidTarget('this client may not request tokens for the given resource or audience');
  }
  return [...new Set(targets)];
}
