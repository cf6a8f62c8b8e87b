import type { Router } from 'express';
import express from 'express';

export interface HealthChecks {
  /** Resolves when the server can serve: database reachable, not shutting down. */
  ready(): Promise<void>;
}

/** `/health/live`: the process answers. `/health/ready`: it can serve traffic. */
export function healthRoutes(checks: HealthChecks): Router {
  const router = express.Router();
  router.get('/health/live', (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ status: 'ok' });
  });
  router.get('/health/ready', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    try {
      await checks.ready();
      res.json({ status: 'ok' });
    } catch (err) {
      req.log?.warn({ err }, 'readiness check failed');
      res.status(503).json({ status: 'unavailable', reason: (err as Error).message });
    }
  });
  return router;
}
