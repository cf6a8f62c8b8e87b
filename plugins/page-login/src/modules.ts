import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AuthMethod } from '@gatehouse-auth/core';
import type { Request, Response } from 'express';

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
 * The browser modules methods ship with their page (`page.module`), read once (at a method's
 * first page) and served from memory under `/login/methods/{ID}/{version}/{file}`. The version
 * is a hash of the files, so they are cached for good and a new release is a new URL. Only the
 * declared files are served: nothing else of a plugin's package is reachable.
 */
export class PageModules {
  private readonly byMethod = new Map<string, ModuleFiles | null>();

  /** `method(id)`: a registered method by id (`api.web.loginFlows.method`); throws for none. */
  constructor(private readonly method: (id: string) => AuthMethod) {}

  private filesOf(methodId: string): ModuleFiles | null {
    if (this.byMethod.has(methodId)) return this.byMethod.get(methodId)!;
    let method: AuthMethod | null = null;
    try {
      method = this.method(methodId);
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

  /** The module URL of a method (under the issuer's path `base`), or null. */
  url(base: string, methodId: string): string | null {
    const m = this.filesOf(methodId);
    return m
      ? `${base}/login/methods/${encodeURIComponent(methodId)}/${m.version}/${encodeURIComponent(m.main)}`
      : null;
  }

  /** GET /login/methods/:id/:version/:file (mounted under /login) */
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
