import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PLUGIN_KINDS, TemplateError, writePluginTemplate, type PluginKind } from './index.js';

const PROG = 'create-gatehouse-plugin';
const USAGE = `${PROG} <${PLUGIN_KINDS.join('|')}> NAME [--dir DIR]`;

/**
 * The directory of an installed package (the core, its testing kit), for the generated package's
 * tests to link to: the one the working directory sees (an operator directory), else the one next
 * to this package (a checkout of Gatehouse). Nothing to download, and it works before they are on
 * the registry.
 */
function installed(name: string): string | undefined {
  for (const from of [path.join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      return path.dirname(createRequire(from).resolve(`${name}/package.json`));
    } catch {
      // not installed there
    }
  }
  return undefined;
}

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(`usage: ${USAGE}\n  (default directory: ./<NAME without scope>)\n`);
    return 0;
  }
  const [kind, name] = positionals;
  if (!kind || !name || positionals.length > 2 || !PLUGIN_KINDS.includes(kind as PluginKind)) {
    process.stderr.write(`${PROG}: usage: ${USAGE}\n`);
    return 2;
  }
  const dir = path.resolve(values.dir ?? name.replace(/^@[^/]+\//, ''));
  writePluginTemplate(kind as PluginKind, name, dir);
  const packages = ['@gatehouse-auth/core', '@gatehouse-auth/testing'].map((p) => installed(p) ?? p);
  process.stdout.write(
    `wrote ${name} in ${dir}\nnext: cd ${path.relative(process.cwd(), dir) || '.'}\n` +
      `      npm install --save-dev ${packages.join(' ')}   # the core and its testing kit, for the tests\n      npm test\n`,
  );
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  if (err instanceof TemplateError) {
    process.stderr.write(`${PROG}: ${err.message}\n`);
    process.exitCode = 1;
  } else if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    process.stderr.write(`${PROG}: ${(err as Error).message.split('\n')[0]} (usage: ${USAGE})\n`);
    process.exitCode = 2;
  } else {
    throw err;
  }
}
