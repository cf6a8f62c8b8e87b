import type { JsonObject, LinkFacts, RequestFacts } from '@gatehouse-auth/plugin-api';
import { browserName } from '../util/user-agent.js';
import { matchNumber } from '../util/crypto.js';

/** Where an exchange keeps what its sign-in link's page shows on another device. */
const LINK_KEY = '_link';

export function newLinkFacts(request: RequestFacts, now: Date): LinkFacts {
  return { number: matchNumber(), ...browserName(request.userAgent), startedAt: now.getTime() };
}

/** The facts as exchange state (merged under whatever the method keeps there). */
export function linkState(facts: LinkFacts | undefined): JsonObject {
  return facts ? { [LINK_KEY]: { ...facts } } : {};
}

/** The facts an exchange keeps, or null (not a link, or an exchange from before they were kept). */
export function linkFactsOf(state: JsonObject): LinkFacts | null {
  const kept = state[LINK_KEY];
  if (!kept || typeof kept !== 'object' || Array.isArray(kept)) return null;
  const { number, browser, os, startedAt } = kept;
  if (typeof number !== 'number' || typeof startedAt !== 'number') return null;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return { number, browser: text(browser), os: text(os), startedAt };
}
