import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import type { AuthMethod } from './extensions.js';
import type { WebApi } from './web.js';

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
 * Since plugin API 1.3: the browser modules methods ship with their page (`page.module`, e.g.
 * FIDO2's WebAuthn driver), for a page that shows methods to serve under its own mount,
 * `{mount}/methods/{ID}/{version}/{file}` (the hosted login page under `/login`, the account page
 * under `/account`, so that it does not depend on which plugin serves the hosted login). Read
 * once (at a method's first page) and served from memory. The version is a hash of the files, so
 * they are cached for good and a new release is a new URL. Only the declared files are served:
 * nothing else of a plugin's package is reachable.
 */
export class MethodModules {
  private readonly byMethod = new Map<string, ModuleFiles | null>();

  constructor(private readonly web: Pick<WebApi, 'loginFlows'>) {}

  private filesOf(methodId: string): ModuleFiles | null {
    if (this.byMethod.has(methodId)) return this.byMethod.get(methodId)!;
    let method: AuthMethod | null = null;
    try {
      method = this.web.loginFlows.method(methodId);
    } catch {
      method = null;
    }
    const page = method?.page;
    let found: ModuleFiles | null = null;
    if (method && page?.module) {
      const files = new Map<string, Buffer>();
      const main = path.basename(page.module);
      files.set(main, readFileSync(page.module));
      for (const [name, file] of Object.entries(page.moduleFiles ?? {})) files.set(name, readFileSync(file));
      const hash = createHash('sha256');
      for (const [name, body] of [...files].sort(([a], [b]) => a.localeCompare(b))) hash.update(name).update(body);
      found = { version: hash.digest('hex').slice(0, 16), main, files };
    }
    // Keyed by the id as registered: `method()` finds any case.
    if (method) this.byMethod.set(method.id, found);
    return found;
  }

  /** The module URL of a method under the page's `mount` (its full path: `${web.base}/login`), or null when it has none. */
  url(mount: string, methodId: string): string | null {
    const m = this.filesOf(methodId);
    return m ? `${mount}/methods/${encodeURIComponent(methodId)}/${m.version}/${encodeURIComponent(m.main)}` : null;
  }

  /** GET /methods/:id/:version/:file, on the page's router. */
  serve = (req: Request, res: Response): void => {
    const id = String(req.params.id);
    // Only a registered method's id, as registered (its modules are read once).
    const m = /^[A-Z0-9_]{1,64}$/.test(id) ? this.filesOf(id) : null;
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
