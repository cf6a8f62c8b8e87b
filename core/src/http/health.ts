import type { Router } from 'express';
import express from 'express';

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
