/**
 * Login stages as a matching problem: each stage must be completed by its own method, so one
 * method never counts twice (PASSWORD cannot satisfy `[[PASSWORD, EMAIL], [PASSWORD, TOTP]]`).
 */

/** The methods a stage still offers once `used` were completed in the login. */
export function offered(stage: readonly string[], used: Iterable<string>): string[] {
  const done = new Set(used);
  return stage.filter((method) => !done.has(method));
}

/**
 * Which stages the completed methods already satisfy, each by a different method, chosen so
 * that every stage left over still offers a method not yet used. Among such choices it covers
 * as many stages as possible, earlier stages first. Returns the stages still to do, in order,
 * or null when no choice leaves them all completable.
 */
export function remainingStages(stages: readonly string[][], completed: readonly string[]): string[][] | null {
  const done = new Set(completed);
  let best: { covered: boolean[]; count: number } | null = null;
  const covered: boolean[] = [];
  // Depth-first over the stages; a stage takes an unused completed method or is left to do.
  // Configs have a handful of stages, so the search is tiny.
  const visit = (index: number, taken: Set<string>, count: number) => {
    if (index === stages.length) {
      if (!best || count > best.count) best = { covered: [...covered], count };
      return;
    }
    const stage = stages[index]!;
    for (const method of stage) {
      if (!done.has(method) || taken.has(method)) continue;
      covered[index] = true;
      taken.add(method);
      visit(index + 1, taken, count + 1);
      taken.delete(method);
    }
    // Left to do: only if it still offers something new.
    if (offered(stage, done).length > 0) {
      covered[index] = false;
      visit(index + 1, taken, count);
    }
  };
  visit(0, new Set(), 0);
  const found = best as { covered: boolean[]; count: number } | null;
  return found ? stages.filter((_, i) => !found.covered[i]) : null;
}

/**
 * A stage that some order of choices leaves with nothing to offer (every method of it used at
 * an earlier stage), or null: `[[PASSWORD, TOTP], [TOTP]]` dead-ends when TOTP comes first.
 * Returns the index of the stage and the earlier choices that empty it.
 */
export function deadEndStage(stages: readonly string[][]): { stage: number; after: string[] } | null {
  const walk = (index: number, used: string[]): { stage: number; after: string[] } | null => {
    if (index === stages.length) return null;
    const choices = offered(stages[index]!, used);
    if (!choices.length) return { stage: index, after: used };
    for (const method of choices) {
      const found = walk(index + 1, [...used, method]);
      if (found) return found;
    }
    return null;
  };
  return walk(0, []);
}
