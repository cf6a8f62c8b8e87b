import { OAuthError, z, type JsonObject, type OAuthClient } from '@gatehouse-auth/core';

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

/** `apps[i].audiences`: the resources an app may request tokens for (a key this plugin adds to apps). */
export const audiencesConfig = z.array(z.string().min(1)).default([]);

/**
 * A file object (mini), as the spec's `restricted_to` shows it. The id is a string: a number in
 * YAML would lose digits beyond 2^53.
 */
const fileObjectConfig = z.strictObject({
  type: z.literal('file'),
  id: z.string().min(1),
  name: z.string().min(1).optional(),
  etag: z.string().min(1).optional(),
});

/**
 * `apps[i].resource_objects`: resources that each stand for one object. Naming one as the
 * `resource` or `audience` of an exchange narrows the new token to that object (`restricted_to`);
 * each is an allowed target too, without being listed in `audiences`.
 */
export const resourceObjectsConfig = z
  .array(
    z.strictObject({
      resource: z.string().refine(isResourceUri, 'must be an absolute URI without a fragment'),
      object: fileObjectConfig,
    }),
  )
  .superRefine((list, ctx) => {
    list.forEach((entry, i) => {
      if (list.findIndex((other) => other.resource === entry.resource) < i) {
        ctx.addIssue({ code: 'custom', path: [i, 'resource'], message: 'is listed twice' });
      }
    });
  })
  .default([]);

/** One `resource_objects` entry as parsed (a file object has only JSON members). */
export interface ResourceObject {
  resource: string;
  object: JsonObject;
}

/** The client's permitted audiences (none when its app names none). */
export function audiencesOf(client: OAuthClient): string[] {
  return (client.settings.audiences as string[] | undefined) ?? [];
}

/** The client's resource objects (none when its app names none). */
export function resourceObjectsOf(client: OAuthClient): ResourceObject[] {
  return (client.settings.resource_objects as ResourceObject[] | undefined) ?? [];
}

/**
 * The audience of the new token: `resource` and `audience` (RFC 8693 §2.1), each one the client's
 * config lists in `audiences` or as a `resource_objects` resource (exact match, no normalisation).
 * Undefined when neither was sent, so the core's default (the client id) applies. The core
 * refuses repeated parameters, so there is at most one of each.
 */
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
  const allowed = [...audiencesOf(client), ...resourceObjectsOf(client).map((o) => o.resource)];
  if (targets.some((t) => !allowed.includes(t))) {
    throw invalidTarget('this client may not request tokens for the given resource or audience');
  }
  return [...new Set(targets)];
}

/** The objects the resolved targets stand for, in target order (none for plain audiences). */
export function objectsNamed(client: OAuthClient, targets: string[]): JsonObject[] {
  const objects = resourceObjectsOf(client);
  return targets.flatMap((t) => objects.filter((o) => o.resource === t).map((o) => o.object));
}
