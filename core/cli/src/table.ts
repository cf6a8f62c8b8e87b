/**
 * Rows under a header, columns padded to their widest cell, two spaces apart, no trailing
 * spaces: the layout of every table the `gatehouse` command prints (its own, and the plugins'
 * commands' through `CliContext.table`).
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** `formatTable` on standard output. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  process.stdout.write(formatTable(header, rows));
}
