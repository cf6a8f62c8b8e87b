/** The pattern syntax: a colour and a sequence of dots of a 3×3 grid, e.g. `RED[1,5,9,6]`. */

export const COLOURS = ['RED', 'GREEN', 'BLUE', 'YELLOW', 'PURPLE', 'ORANGE'] as const;

/** The fewest dots a pattern may have whatever `min_dots` says (NIST: ≥4 for an activation secret). */
export const FLOOR_DOTS = 4;

/** Longer input is not a pattern (the longest, `ORANGE[1,2,3,4,5,6,7,8,9]`, has 25 characters). */
const MAX_INPUT = 200;

const SHAPE = /^([A-Za-z]+)\[([^\]]*)\]$/;

/** The rule, for messages. */
export function patternRule(minDots: number): string {
  return (
    `a pattern is a colour (${COLOURS.join(', ')}) followed by ${minDots} to 9 different dots ` +
    `of 1–9 in brackets, e.g. RED[1,5,9,6]`
  );
}

/**
 * The normalised pattern (upper-case colour, no spaces: `RED[1,5,9,6]`), or null when `input`
 * is not a pattern with at least `minDots` dots.
 */
export function normalizePattern(input: string, minDots: number): string | null {
  if (input.length > MAX_INPUT) return null;
  const match = SHAPE.exec(input.replace(/\s+/g, ''));
  if (!match) return null;
  const colour = match[1]!.toUpperCase();
  if (!(COLOURS as readonly string[]).includes(colour)) return null;
  const dots = match[2]!.split(',');
  if (dots.length < minDots || dots.length > 9) return null;
  if (!dots.every((d) => /^[1-9]$/.test(d))) return null;
  if (new Set(dots).size !== dots.length) return null;
  return `${colour}[${dots.join(',')}]`;
}
