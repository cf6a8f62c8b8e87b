import type { UserRecord } from '@gatehouse-auth/core';

export interface PickerInput {
  /** The methods the flow's current stage accepts, in order. */
  stage: string[];
  /** Methods already used in this login (never offered again). */
  used: readonly string[];
  /** The flow's user, once a stage or a session named them. */
  user: UserRecord | null;
  isEnrolled(user: UserRecord, method: string): Promise<boolean>;
  /** Of these methods, the one the user last signed in with. */
  lastUsed(userId: string, methods: string[]): Promise<string | null>;
}

/**
 * What the page offers at this stage. Before the user is known, every method of the stage
 * (which ones someone has set up would tell whether the account exists). Once known, only the
 * ones the user has set up, the one they used last chosen first.
 */
export async function pickMethods(input: PickerInput): Promise<{ ids: string[]; preselect: string | null }> {
  const candidates = input.stage.filter((id) => !input.used.includes(id));
  if (!input.user) return { ids: candidates, preselect: candidates[0] ?? null };
  const ids: string[] = [];
  for (const id of candidates) if (await input.isEnrolled(input.user, id)) ids.push(id);
  const last = ids.length > 1 ? await input.lastUsed(input.user.id, ids) : null;
  return { ids, preselect: last ?? ids[0] ?? null };
}
