import type { Metrics, ServerStats } from '@gatehouse-auth/core';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The request methods node's parser accepts are few, but a label gets only the usual ones. */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Latency buckets in seconds: from a cached JWKS answer to a slow password hash. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The Prometheus metrics of one server, in a registry of its own (tests run several servers). */
export class PromMetrics implements Metrics {
  readonly enabled = true;
  readonly registry: Registry;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly tokens: Counter<'grant_type'>;
  private readonly refusals: Counter<'grant_type' | 'error'>;
  private readonly verifications: Counter<'method' | 'outcome' | 'error_code'>;
  private readonly verdicts: Counter<'rule' | 'phase' | 'action'>;
  private readonly deliveries: Counter<'channel' | 'kind' | 'outcome'>;

  constructor(sources: ServerStats, opts: { defaultMetrics: boolean }) {
    // In a cluster worker the primary asks for this registry over IPC (cluster.ts, at `serve`).
    this.registry = new Registry();
    const registers = [this.registry];
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });

    this.requests = new Counter({
      name: 'gatehouse_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route template',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.tokens = new Counter({
      name: 'gatehouse_tokens_issued_total',
      help: 'Access tokens issued, by grant type (implicit included)',
      labelNames: ['grant_type'],
      registers,
    });
    this.refusals = new Counter({
      name: 'gatehouse_token_errors_total',
      help: 'Token requests refused, by grant type and OAuth error code',
      labelNames: ['grant_type', 'error'],
      registers,
    });
    this.verifications = new Counter({
      name: 'gatehouse_verifications_total',
      help: 'Verification requests (proofs), by method, outcome and error code (none on success)',
      labelNames: ['method', 'outcome', 'error_code'],
      registers,
    });
    this.verdicts = new Counter({
      name: 'gatehouse_fds_verdicts_total',
      help: 'FDS rule verdicts, by rule, phase and action (a failing rule counts as deny)',
      labelNames: ['rule', 'phase', 'action'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'gatehouse_deliveries_total',
      help: 'Messages handed to delivery channels, by channel, kind and outcome (each attempt)',
      labelNames: ['channel', 'kind', 'outcome'],
      registers,
    });

    if (sources.dialect === 'postgres') {
      new Gauge({
        name: 'gatehouse_db_pool_connections',
        help: 'PostgreSQL pool connections, by state (idle, busy)',
        labelNames: ['state'],
        registers,
        collect() {
          const s = sources.database();
          if (s.dialect !== 'postgres') return;
          this.set({ state: 'idle' }, s.idle);
          this.set({ state: 'busy' }, s.total - s.idle);
        },
      });
      new Gauge({
        name: 'gatehouse_db_pool_waiting',
        help: 'Queries waiting for a PostgreSQL pool connection',
        registers,
        collect() {
          const s = sources.database();
          if (s.dialect === 'postgres') this.set(s.waiting);
        },
      });
    } else {
      new Gauge({
        name: 'gatehouse_db_write_batch_pending',
        help: 'SQLite writes waiting for the group commit at the end of this event-loop turn',
        registers,
        collect() {
          const s = sources.database();
          if (s.dialect === 'sqlite') this.set(s.pendingWrites);
        },
      });
      new Gauge({
        name: 'gatehouse_db_wal_pages',
        help: 'SQLite WAL size in pages at the last background checkpoint (it starts over past 4000)',
        registers,
        collect() {
          const s = sources.database();
          if (s.dialect === 'sqlite') this.set(s.walPages);
        },
      });
    }
    new Gauge({
      name: 'gatehouse_dependency_up',
      help: 'Whether a dependency answered its last check (1) or not (0): the database, Redis, what plugins check',
      labelNames: ['dependency', 'owner'],
      // Across cluster workers: down if any worker sees it down.
      aggregator: 'min',
      registers,
      async collect() {
        for (const d of await sources.dependencies()) this.set({ dependency: d.name, owner: d.owner }, d.up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'gatehouse_password_hashing_running',
      help: 'Password and code hashes running (bounded by the CPUs)',
      registers,
      collect() {
        this.set(sources.hashing().running);
      },
    });
    new Gauge({
      name: 'gatehouse_password_hashing_waiting',
      help: 'Password and code hashes waiting for a CPU (past 256, logins get 503)',
      registers,
      collect() {
        this.set(sources.hashing().waiting);
      },
    });
    new Gauge({
      name: 'gatehouse_jobs_running',
      help: 'Background jobs (deliveries, logout notices) running in this process',
      registers,
      collect() {
        this.set(sources.jobsRunning());
      },
    });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const m = HTTP_METHODS.has(method) ? method : 'other';
    this.requests.inc({ method: m, route, status: String(status) });
    this.latency.observe({ method: m, route }, seconds);
  }

  tokenIssued(grantType: string): void {
    this.tokens.inc({ grant_type: grantType });
  }

  tokenRefused(grantType: string, error: string): void {
    this.refusals.inc({ grant_type: grantType, error });
  }

  verification(method: string, errorCode: string | null): void {
    this.verifications.inc({
      method,
      outcome: errorCode ? 'failure' : 'success',
      error_code: errorCode ?? 'none',
    });
  }

  fdsVerdict(rule: string, phase: string, action: string): void {
    this.verdicts.inc({ rule, phase, action });
  }

  delivery(channel: string, kind: string, outcome: 'sent' | 'failed'): void {
    this.deliveries.inc({ channel, kind, outcome });
  }
}
