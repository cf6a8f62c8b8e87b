import { ADMIN_THROTTLED, defineRoute, type RouteSpec } from '@gatehouse-auth/plugin-api';
import type { Router } from 'express';
import express from 'express';
import { z } from 'zod';
import type { AdminGuard } from './admin-guard.js';
import type { DependencyChecks } from '../observability/dependencies.js';

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
  dependencies: defineRoute({
    id: 'healthDependencies',
    method: 'get',
    path: '/health/dependencies',
    tag: 'health',
    summary: 'What the server depends on, each checked now or in the last 10 s (admin token)',
    description:
      'The database and what plugins check (Redis, an SMTP relay, a ' +
      "webhook's host). Always 200 when the checks ran: `status` is `degraded` when one is down. " +
      'Not for readiness: every node shares these, so a load balancer acting on it would take all of them out.',
    security: ['adminToken'],
    response: {
      description: 'the dependencies and their states',
      schema: z.object({
        status: z.enum(['ok', 'degraded']),
        dependencies: z.array(
          z.object({
            name: z.string(),
            owner: z.string().meta({ description: '`core`, or the plugin that checks it' }),
            up: z.boolean(),
            reason: z.string().optional().meta({ description: "why it is down: the check's error" }),
            ms: z.number().int(),
            checkedAt: z.string(),
          }),
        ),
      }),
      raw: true,
      cache: 'no-store',
    },
    errors: ['UNAUTHORIZED', 'ADMIN_API_DISABLED', ADMIN_THROTTLED],
  }),
} satisfies Record<string, RouteSpec>;

/** What readiness depends on (the container's cradle provides it). */
export interface HealthDeps {
  /** Set when the server stops taking traffic (SIGTERM). */
  lifecycle: { draining: boolean };
  sql: { select(sql: string): Promise<unknown> };
  dependencies: DependencyChecks;
  adminGuard: Pick<AdminGuard, 'require'>;
}

/**
 * `/health/live`: the process answers. `/health/ready`: it can serve traffic (database reachable,
 * not draining). `/health/dependencies` (admin): each dependency's state, for a human or a dashboard.
 */
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
  router.get('/health/dependencies', deps.adminGuard.require, async (_req, res) => {
    const dependencies = await deps.dependencies.states();
    res.set('Cache-Control', 'no-store').json({
      status: dependencies.every((d) => d.up) ? 'ok' : 'degraded',
      dependencies,
    });
  });
  return router;
}
