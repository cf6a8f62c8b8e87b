import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Limiter } from './util/limiter.js';
import express from 'express';
import { formBody, jsonBody } from './http/parsers.js';
import type { Logger } from 'pino';
import type { GatehouseConfig } from './config/schema.js';
import type { Clock, Services } from '@gatehouse-auth/plugin-api';
import { randomDigits, randomToken, safeEqual, SecretBox, sha256 } from './util/crypto.js';

export const systemClock: Clock = { now: () => new Date() };

export const cryptoHelpers: Services['crypto'] = { randomToken, randomDigits, sha256, safeEqual };

// At most 256 hashes wait: a flood of logins is refused (503) rather than queued without bound.
const heavyWork = new Limiter(Math.max(1, availableParallelism() - 1), 256);

/** The process-wide limiter behind services.heavy. */
export const runHeavy: Services['heavy'] = (work) => heavyWork.run(work);

/** How busy that limiter is: password and code hashes running and waiting. */
export const heavyWorkLoad = (): { running: number; waiting: number } => heavyWork.load;

export const httpHelpers: Services['http'] = {
  createRouter: () => express.Router(),
  json: (options) => jsonBody(options?.limit ?? '100kb'),
  form: (options) => formBody(options?.limit ?? '16kb', options?.fields ?? 50),
};

/**
 * The key that encrypts secrets at rest: `secrets.encryption_key` from config, else a key file
 * generated once (0600). Several nodes must share the configured key, not a file each.
 */
export function loadSecretBox(config: GatehouseConfig, logger: Logger): SecretBox {
  if (config.secrets.encryption_key) {
    return new SecretBox([Buffer.from(config.secrets.encryption_key, 'base64')]);
  }
  const file = path.resolve(config.secrets.key_file);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      logger.warn({ file }, 'generated a new encryption key file; set secrets.encryption_key in production');
    } catch (err) {
      // Another process created it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} must hold 32 bytes encoded as base64`);
  return new SecretBox([key]);
}
