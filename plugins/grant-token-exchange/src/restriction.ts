import { OAuthError, type JsonObject, type JsonValue, type StoredToken } from '@gatehouse-auth/core';
import { isJsonObject } from './json.js';

/** One `restricted_to` entry: an object and one file scope the token has on it. */
export type Restriction = { object: JsonObject; scope: string };

const isRestriction = (value: JsonValue): value is Restriction =>
  isJsonObject(value) && isJsonObject(value.object) && typeof value.scope === 'string';

/** What a token is restricted to (kept in its data), or undefined when it is not restricted. */
export function restrictionOf(token: StoredToken): Restriction[] | undefined {
  const value = token.data.restricted_to;
  return Array.isArray(value) ? value.filter(isRestriction) : undefined;
}

// Objects are told apart by type and id: their name or etag may change in the config.
const sameObject = (a: JsonObject, b: JsonObject) => a.type === b.type && a.id === b.id;

const distinct = (objects: JsonObject[]) =>
  objects.filter((object, i) => objects.findIndex((o) => sameObject(o, object)) === i);

/**
 * The objects the new token is restricted to; none when it is not. A restricted subject token
 * bounds them: named objects must be among its own, and naming none keeps its own. So a
 * restricted token only ever yields a narrower one, never an unrestricted one. Checking objects
 * and scopes apart suffices: a `restricted_to` always pairs every object with every scope.
 */
export function restrictedObjects(named: JsonObject[], subject: StoredToken): JsonObject[] {
  const held = restrictionOf(subject);
  if (!held) return distinct(named);
  const heldObjects = distinct(held.map((r) => r.object));
  const objects = named.length ? distinct(named) : heldObjects;
  if (objects.length === 0 || objects.some((o) => !heldObjects.some((h) => sameObject(h, o)))) {
    throw new OAuthError('invalid_target', 'the subject_token is restricted to other objects');
  }
  return objects;
}

/** `restricted_to`: one entry per object and scope, object by object. */
export const restrictionFor = (objects: JsonObject[], scope: string[]): Restriction[] =>
  objects.flatMap((object) => scope.map((s) => ({ object, scope: s })));

/** Introspection shows a restricted token's `restricted_to`, as the token response did. */
export function restrictionClaims(token: StoredToken): JsonObject {
  const restriction = restrictionOf(token);
  return restriction ? { restricted_to: restriction } : {};
}
