import { REQUIRED_ACTIONS, type RecordStore, type RequiredAction } from '@gatehouse-auth/plugin-api';

export { REQUIRED_ACTIONS, type RequiredAction } from '@gatehouse-auth/plugin-api';

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
