/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string of a parsed config tree.
 * A reference to an unset variable without a default is reported with its key path,
 * so a missing secret stops start-up instead of becoming an empty string.
 */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: (string | number)[] = [],
  missing: string[] = [],
): unknown {
  if (typeof value === 'string') {
    // A value that is only `${VAR:-}` with VAR unset means "not set", not "empty string".
    if (/^\$\{[A-Za-z_][A-Za-z0-9_]*:-\}$/.test(value) && !env[value.slice(2, -3)]) return null;
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      missing.push(`${formatPath(path)}: environment variable ${name} is not set`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, [...path, i], missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateEnv(v, env, [...path, k], missing)]),
    );
  }
  return value;
}

/** `['apps', 0, 'redirect_uris', 1]` → `apps[0].redirect_uris[1]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(root)';
}
