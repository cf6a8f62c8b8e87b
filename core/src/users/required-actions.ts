import type { RecordStore } from '@gatehouse-auth/plugin-api';

/**
 * Since plugin API 1.3: what an admin asks a user to do at their next sign-in, before the app gets
 * its answer (Keycloak's required actions): a new password, a second factor.
 */
export const REQUIRED_ACTIONS = ['change_password', 'second_factor'] as const;
export type RequiredAction = (typeof REQUIRED_ACTIONS)[number];

/** The path of the hosted page (a plugin's) that walks a signed-in user through them. */
export const REQUIRED_ACTIONS_PATH = '/login/required';

/** The required actions of each user, kept with the user (one record per user, none when none). */
export class RequiredActions {
  constructor(private readonly records: RecordStore) {}

  async of(userId: string): Promise<RequiredAction[]> {
    const data = (await this.records.get(userId))?.data;
    const list = Array.isArray(data?.actions) ? data.actions : [];
    return REQUIRED_ACTIONS.filter((action) => list.includes(action));
  }

  /** Sets the user's actions (an empty list removes the record). */
  async set(userId: string, actions: readonly RequiredAction[]): Promise<RequiredAction[]> {
    const kept = REQUIRED_ACTIONS.filter((action) => actions.includes(action));
    if (kept.length) await this.records.put(userId, { actions: [...kept] });
    else await this.records.delete(userId);
    return kept;
  }
}
