import { readFileSync } from 'node:fs';

/** The core package's version: the traces' `service.version`, the API document's `info.version`. */
export const CORE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
