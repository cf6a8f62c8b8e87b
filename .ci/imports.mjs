// Shared by the .ci checks that read imports (check-plugins, check-core-imports).
/**
 * Module specifiers of static imports, re-exports, dynamic imports and require calls, with their
 * line numbers. A small scanner rather than a regex over the text: comments are skipped, and a
 * string counts only when it follows `from`, `import`, `import(` or `require(`.
 */
export function importsOf(code) {
  const found = [];
  const IMPORT_CONTEXT = /(?:^|[^\w$.])(?:from|import|import\s*\(|require\s*\()\s*$/;
  let line = 1;
  let recent = ''; // the code read so far, comments dropped and strings emptied
  let i = 0;
  while (i < code.length) {
    const c = code[i];
    const next = code[i + 1];
    if (c === '/' && next === '/') {
      while (i < code.length && code[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = code.indexOf('*/', i + 2);
      const stop = end < 0 ? code.length : end + 2;
      line += (code.slice(i, stop).match(/\n/g) ?? []).length;
      recent += ' ';
      i = stop;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < code.length && code[j] !== c) j += code[j] === '\\' ? 2 : 1;
      const text = code.slice(i + 1, j);
      if (c !== '`' && IMPORT_CONTEXT.test(recent.slice(-200))) found.push({ specifier: text, line });
      line += (text.match(/\n/g) ?? []).length;
      recent += '""';
      i = j + 1;
    } else {
      if (c === '\n') line++;
      recent += c;
      i++;
    }
  }
  return found;
}
