import { escapeHtml, isSafeHtml, SafeHtml } from './html.js';

/** Values for a message's `{name}` placeholders. */
export type MessageVars = Readonly<Record<string, string | number>>;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The placeholder names a message uses. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/** One pass: a value that itself contains `{x}` is not filled in again. */
function fill(text: string, value: (name: string) => string | null): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => value(name) ?? whole);
}

/**
 * The messages of one locale, English under every gap: what a page is written in. Keys of the
 * core are in core/locales/en.json; a method's keys (`method.<ID>.…`) may be in no catalog, and
 * then the method's own English is used.
 */
export class Messages {
  constructor(
    /** The chosen locale's tag, for `<html lang>`. */
    readonly locale: string,
    private readonly table: ReadonlyMap<string, string>,
  ) {}

  /** A message with its placeholders filled in; the key itself when no catalog has it. */
  t(key: string, vars: MessageVars = {}): string {
    return this.or(key, key, vars);
  }

  /** A message that may be in no catalog (a method's): `fallback` then. */
  or(key: string, fallback: string, vars: MessageVars = {}): string {
    return fill(this.table.get(key) ?? fallback, (name) => (name in vars ? String(vars[name]) : null));
  }

  /** Like `or`, for text a method may not have at all (no help line): null stays null. */
  optional(key: string, fallback: string | null | undefined): string | null {
    return this.table.get(key) ?? fallback ?? null;
  }

  /**
   * A message as markup: its own text escaped, each placeholder filled with escaped text or an
   * `html` part (`{name: html\`<strong>${name}</strong>\`}`). Catalog text never becomes markup.
   */
  html(key: string, vars: Readonly<Record<string, string | number | SafeHtml>> = {}): SafeHtml {
    const text = this.table.get(key) ?? key;
    let out = '';
    let last = 0;
    for (const m of text.matchAll(PLACEHOLDER)) {
      const value = vars[m[1]!];
      if (value === undefined) continue;
      out += escapeHtml(text.slice(last, m.index)) + (isSafeHtml(value) ? value.value : escapeHtml(String(value)));
      last = m.index + m[0].length;
    }
    return new SafeHtml(out + escapeHtml(text.slice(last)));
  }

  /** The messages under these key prefixes: what a page hands its script. */
  under(prefixes: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, text] of this.table) if (prefixes.some((p) => key.startsWith(p))) out[key] = text;
    return out;
  }
}
