/**
 * What each kind of extension must have, checked when a plugin adds one: a method without
 * `verify` would boot and then fail every request that reaches it. Returns the problems found.
 */

type Shape = Record<string, unknown>;

const fn = (item: Shape, key: string) => (typeof item[key] === 'function' ? [] : [`has no ${key} function`]);
const strings = (item: Shape, key: string) =>
  Array.isArray(item[key]) && (item[key] as unknown[]).every((v) => typeof v === 'string')
    ? []
    : [`has no ${key} list of strings`];

/** Upper case, as the method is a path segment and a config value (`login_stages`). */
export const METHOD_ID = /^[A-Z][A-Z0-9_]*$/;

export function methodProblems(m: Shape): string[] {
  const problems = [
    ...(typeof m.id === 'string' && METHOD_ID.test(m.id) ? [] : ['has an id that is not upper case (such as TOTP)']),
    ...strings(m, 'amr'),
    ...strings(m, 'verifyFields'),
    ...fn(m, 'isEnrolled'),
    ...fn(m, 'initiate'),
    ...fn(m, 'verify'),
  ];
  if (m.files !== undefined && !Array.isArray(m.files)) problems.push('has files that are not a list');
  const enrollment = m.enrollment as Shape | undefined;
  if (enrollment !== undefined) {
    if (!enrollment || typeof enrollment !== 'object') problems.push('has an enrollment that is not an object');
    else {
      problems.push(...fn(enrollment, 'initiate').map((p) => `enrollment ${p}`));
      for (const step of ['scan', 'verify'])
        if (enrollment[step] !== undefined) problems.push(...fn(enrollment, step).map((p) => `enrollment ${p}`));
    }
  }
  return problems;
}

export function grantProblems(g: Shape): string[] {
  return [...strings(g, 'parameters'), ...fn(g, 'handle')];
}

export function fdsRuleProblems(r: Shape): string[] {
  return fn(r, 'evaluate');
}

export function channelProblems(c: Shape): string[] {
  const kinds = c.kinds as unknown[];
  return [...(Array.isArray(kinds) && kinds.length ? strings(c, 'kinds') : ['has no kinds']), ...fn(c, 'send')];
}

export function routeProblems(r: Shape): string[] {
  return [
    ...(typeof r.path === 'string' && r.path.startsWith('/') ? [] : ['has a path that does not start with /']),
    ...fn(r, 'router'),
  ];
}

/** The core services a plugin may replace (`provides`), with what a replacement must have. */
export const REPLACEABLE_SERVICES: Record<string, (service: Shape) => string[]> = {
  passwordHashing: (s) => fn(s, 'withCost'),
  userDirectory: (s) => [...fn(s, 'findById'), ...fn(s, 'findByIdentifier')],
};
