/**
 * The brand of safe markup: a registered symbol, so that markup a plugin made with `html` counts
 * even when its import of the core is another module instance of the same file (a test runner's
 * loader, a linked package). Request data (JSON, forms) cannot carry a symbol.
 */
const SAFE = Symbol.for('@gatehouse-auth/safe-html');

/** Markup that is already safe to emit: produced by `html` or marked with `trusted`. */
export class SafeHtml {
  readonly [SAFE] = true;

  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Marks a constant string as markup. Never pass data from a request or the database. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

export function isSafeHtml(value: unknown): value is SafeHtml {
  return value instanceof SafeHtml || (typeof value === 'object' && value !== null && SAFE in value);
}

function render(value: unknown): string {
  if (isSafeHtml(value)) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * Tagged template that escapes every interpolated value, except nested `html` results.
 * Arrays are joined; null, undefined and false render as nothing (for conditional parts).
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}
