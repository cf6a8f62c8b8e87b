import type { JsonValue, OAuthClient } from '@gatehouse-auth/plugin-api';
import { remainingStages } from '../verification/stages.js';
import type { ClaimsRequest } from './claims.js';
import { OAuthError } from './errors.js';

/** What an authorization request says about the authentication it wants (OIDC Core §3.1.2.1, §5.5.1.1). */
export interface AcrRequest {
  acr_values?: string[] | null;
  claims?: ClaimsRequest | null;
}

const strings = (values: JsonValue[]) => values.filter((v): v is string => typeof v === 'string');

/** The acr values asked for, in order of preference, and whether the RP made them essential. */
function wanted(request: AcrRequest): { values: string[]; essential: boolean } {
  const claim = request.claims?.id_token?.acr;
  if (claim && (claim.values !== undefined || claim.value !== undefined)) {
    const values = claim.values !== undefined ? strings(claim.values) : strings([claim.value!]);
    return { values, essential: claim.essential === true };
  }
  return { values: request.acr_values ?? [], essential: false };
}

/**
 * The stages a login for this request takes: those of the first requested acr value the app
 * offers, else the app's own. Unknown voluntary values are ignored (§3.1.2.1); when the RP made
 * `acr` essential and the app offers none of its values, the request cannot be met.
 */
export function stagesFor(client: OAuthClient, request: AcrRequest): string[][] {
  const { values, essential } = wanted(request);
  for (const value of values) {
    const level = client.acrValues.find((a) => a.acr === value);
    if (level) return level.stages;
  }
  if (essential && values.length) {
    throw new OAuthError('unmet_authentication_requirements', 'this app offers none of the requested acr values');
  }
  return client.loginStages;
}

/** The strongest acr value whose stages the completed methods meet, or null (`acr` left out of the ID token). */
export function achievedAcr(client: OAuthClient, methods: string[]): string | null {
  for (const level of [...client.acrValues].reverse()) {
    if (remainingStages(level.stages, methods)?.length === 0) return level.acr;
  }
  return null;
}
