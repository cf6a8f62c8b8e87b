import { OAuthError, type OAuthServices } from '@gatehouse-auth/core';

/** The spec's file scopes: the only scopes a token restricted to objects may carry. */
export const FILE_SCOPES: readonly string[] = [
  'annotation_edit',
  'annotation_view_all',
  'annotation_view_self',
  'base_explorer',
  'base_picker',
  'base_preview',
  'base_upload',
  'item_delete',
  'item_download',
  'item_preview',
  'item_rename',
  'item_share',
];

const isFileScope = (scope: string) => FILE_SCOPES.includes(scope);

// The spec answers a scope the subject token lacks with 401; every other scope failure is 400.
const notHeld = (description: string) => new OAuthError('invalid_scope', description, 401);

/** Without `scope`: everything the subject token holds, or, for a restricted token, its file scopes. */
function defaultScope(held: string[], restricted: boolean): string[] {
  if (!restricted) return [...held];
  const files = held.filter(isFileScope);
  if (files.length === 0) throw notHeld('the subject_token holds no file scope');
  return files;
}

/**
 * Down-scoping: every requested scope must be held by the subject token. A token restricted to
 * objects carries file scopes only: `restricted_to` pairs each object with a file scope, and
 * another scope would apply beyond those objects.
 */
export function resolveExchangeScope(
  oauth: OAuthServices,
  requested: string | undefined,
  held: string[],
  restricted: boolean,
): string[] {
  if (requested === undefined) return defaultScope(held, restricted);
  // Checked against its own parts, resolveScope only validates the syntax.
  const parts = oauth.resolveScope(requested, requested.split(' '), []);
  const others = restricted ? parts.filter((p) => !isFileScope(p)) : [];
  if (others.length) {
    throw new OAuthError(
      'invalid_scope',
      `a token restricted to objects carries file scopes only, not: ${others.join(' ')}`,
    );
  }
  const missing = parts.filter((p) => !held.includes(p));
  if (missing.length) throw notHeld(`the subject_token does not hold: ${missing.join(' ')}`);
  return parts;
}
