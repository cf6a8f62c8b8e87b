import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import type { AuthMethod } from '../plugins/extensions.js';

interface ModuleFiles {
  version: string;
  main: string;
  files: Map<string, Buffer>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The browser modules methods ship with their page (`page.module`), read once at start-up and
 * served from memory under `/login/methods/{ID}/{version}/{file}`. The version is a hash of
 * the files, so they are cached for good and a new release is a new URL. Only the declared
 * files are served: nothing else of a plugin's package is reachable.
 */
export class PageModules {
  private readonly byMethod = new Map<string, ModuleFiles>();

  constructor(methods: AuthMethod[]) {
    for (const method of methods) {
      const page = method.page;
      if (!page?.module) continue;
      const files = new Map<string, Buffer>();
      const main = path.basename(page.module);
      files.set(main, readFileSync(page.module));
      for (const [name, file] of Object.entries(page.moduleFiles ?? {})) files.set(name, readFileSync(file));
      const hash = createHash('sha256');
      for (const [name, body] of [...files].sort(([a], [b]) => a.localeCompare(b))) hash.update(name).update(body);
      this.byMethod.set(method.id, { version: hash.digest('hex').slice(0, 16), main, files });
    }
  }

  /** The module URL of a method (under the issuer's path `base`), or null. */
  url(base: string, methodId: string): string | null {
    const m = this.byMethod.get(methodId);
    return m
      ? `${base}/login/methods/${encodeURIComponent(methodId)}/${m.version}/${encodeURIComponent(m.main)}`
      : null;
  }

  /** GET /login/methods/:id/:version/:file */
  serve = (req: Request, res: Response): void => {
    const m = this.byMethod.get(String(req.params.id));
    const body = m && m.version === req.params.version ? m.files.get(String(req.params.file)) : undefined;
    if (!body) {
      res.status(404).type('text/plain').send('not found');
      return;
    }
    res.set({
      'Content-Type': TYPES[path.extname(String(req.params.file))] ?? 'application/octet-stream',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    });
    res.send(body);
  };
}
