import type { Router } from 'express';
import express from 'express';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from './api-spec.js';

const ok = z.object({ status: z.literal('ok') });

/** Raw JSON (no envelope): what load balancers and orchestrators read. */
export const HEALTH_API = {
  live: defineRoute({
    id: 'healthLive',
    method: 'get',
    path: '/health/live',
    tag: 'health',
    summary: 'The process answers',
    response: { description: 'alive', schema: ok, raw: true, cache: 'no-store' },
    errors: [],
  }),
  ready: defineRoute({
    id: 'healthReady',
    method: 'get',
    path: '/health/ready',
    tag: 'health',
    summary: 'The server can take traffic: the database answers and it is not shutting down',
    response: { description: 'ready', schema: ok, raw: true, cache: 'no-store' },
    others: [
      {
        status: 503,
        description: 'not ready (draining, or the database does not answer)',
        schema: z.object({ status: z.literal('unavailable'), reason: z.string() }),
      },
    ],
    errors: [],
  }),
} satisfies Record<string, RouteSpec>;

/** What readiness depends on (the container's cradle provides it). */
export interface HealthDeps {
  /** Set when the server stops taking traffic (SIGTERM). */
  lifecycle: { draining: boolean };
  sql: { select(sql: string): Promise<unknown> };
}

/** `/health/live`: the process answers. `/health/ready`: it can serve traffic (database reachable, not draining). */
export function healthRoutes(deps: HealthDeps): Router {
  const ready = async () => {
    if (deps.lifecycle.draining) throw new Error('shutting down');
    await deps.sql.select('SELECT 1');
  };
  const router = express.Router();
  router.get('/health/live', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  router.get('/health/ready', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    try {
      await ready();
      res.json({ status: 'ok' });
    } catch (err) {
      req.log?.warn({ err }, 'readiness check failed');
      res.status(503).json({ status: 'unavailable', reason: (err as Error).message });
    }
  });
  return router;
}
