/**
 * Rows under a header on standard output, columns padded to their widest cell, two spaces apart,
 * no trailing spaces: the layout of every table the `gatehouse` command prints (its own, and the
 * plugins' commands' through `CliContext.table`).
 */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write([line(header), ...rows.map(line)].join('\n') + '\n');
}
