/** Language tags looked at, at most, of one header or parameter: bounded work per request. */
const MAX_TAGS = 20;
/** Longer headers are cut: browsers send a few dozen characters. */
const MAX_HEADER = 512;

/**
 * The tags of an Accept-Language header (RFC 9110 §12.5.4), best first: `q=0` and `*` left
 * out, equal weights kept in the order given.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const ranked = header
    .slice(0, MAX_HEADER)
    .split(',')
    .slice(0, MAX_TAGS)
    .map((part, i) => {
      const [tag = '', ...params] = part.split(';').map((s) => s.trim());
      const q = params.find((p) => /^q=/i.test(p));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag, weight: Number.isFinite(weight) ? weight : 0, i };
    })
    .filter((r) => r.tag && r.tag !== '*' && r.weight > 0);
  return ranked.sort((a, b) => b.weight - a.weight || a.i - b.i).map((r) => r.tag);
}

/**
 * The supported locale a tag asks for: itself, else each shorter prefix (`de-CH-1996` →
 * `de-CH` → `de`); case does not matter. Null when none is supported.
 */
function match(tag: string, supported: ReadonlyMap<string, string>): string | null {
  const parts = tag.toLowerCase().split('-');
  for (let n = parts.length; n > 0; n--) {
    const found = supported.get(parts.slice(0, n).join('-'));
    if (found) return found;
  }
  return null;
}

/**
 * The locale of a page: the first of `ui_locales` (OIDC Core §3.1.2.1, space-separated, in order
 * of preference) that is supported, else the best of Accept-Language, else `fallback`.
 */
export function negotiate(
  supported: readonly string[],
  uiLocales: string | null | undefined,
  acceptLanguage: string | undefined,
  fallback: string,
): string {
  const byLower = new Map(supported.map((s) => [s.toLowerCase(), s]));
  const asked = (uiLocales ?? '').split(' ').filter(Boolean).slice(0, MAX_TAGS);
  for (const tag of [...asked, ...acceptedLanguages(acceptLanguage)]) {
    const found = match(tag, byLower);
    if (found) return found;
  }
  return fallback;
}

/**
 * Since plugin API 1.3: the language of a message to the person behind a request (a code by
 * text or email, a notice): the sign-in request's `ui_locales`, else Accept-Language, among
 * `supported`; else `fallback` (the first supported).
 */
export function pickLocale(
  supported: readonly string[],
  request: { uiLocales?: string | null; acceptLanguage?: string },
  fallback: string = supported[0] ?? 'en',
): string {
  return negotiate(supported, request.uiLocales, request.acceptLanguage, fallback);
}
