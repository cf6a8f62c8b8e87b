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
};

/**
 * The browser modules methods ship with their page (`page.module`, e.g. FIDO2's WebAuthn
 * driver), served by the account page under `/account/methods/{ID}/{version}/{file}` so that
 * the page does not depend on which plugin serves the hosted login. Only the declared files are
 * served; the version is a hash of them (cached for good).
 */
export class MethodModules {
  private readonly byMethod = new Map<string, ModuleFiles | null>();

  constructor(private readonly method: (id: string) => AuthMethod | null) {}

  private filesOf(methodId: string): ModuleFiles | null {
    if (this.byMethod.has(methodId)) return this.byMethod.get(methodId)!;
    const method = this.method(methodId);
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
    if (method) this.byMethod.set(method.id, found);
    return found;
  }

  /** The module URL of a method under the page's `base`, or null when it has none. */
  url(base: string, methodId: string): string | null {
    const m = this.filesOf(methodId);
    return m ? `${base}/methods/${encodeURIComponent(methodId)}/${m.version}/${encodeURIComponent(m.main)}` : null;
  }

  /** GET /methods/:id/:version/:file */
  serve = (req: Request, res: Response): void => {
    const id = String(req.params.id);
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
