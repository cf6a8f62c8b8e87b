import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DriverStats } from '../storage/drivers.js';
import type { DependencyState } from './dependencies.js';

/**
 * What the server counts. Every label value comes from a bounded set the code or the config
 * defines (route templates, registered grant types, methods, rules and channels, error codes):
 * never a raw path, an identifier, a client id or anything a caller typed (decision 25).
 */
export interface Metrics {
  /** The registry to scrape; null when metrics are off. */
  readonly registry: Registry | null;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  tokenIssued(grantType: string): void;
  /** A token request refused: its grant type (or `unsupported`) and the OAuth error code. */
  tokenRefused(grantType: string, error: string): void;
  /** A verification request: `success`, or the error code it was answered with. */
  verification(method: string, errorCode: string | null): void;
  fdsVerdict(rule: string, phase: string, action: string): void;
  delivery(channel: string, kind: string, outcome: 'sent' | 'failed'): void;
}

/** Where the gauges read the server's load at each scrape. */
export interface GaugeSources {
  /** Which database gauges there are: a pool's (PostgreSQL) or the write batch's (SQLite). */
  dialect: DriverStats['dialect'];
  database(): DriverStats;
  /** Password and code hashes running and waiting in the CPU-heavy-work limiter. */
  hashing(): { running: number; waiting: number };
  /** Background jobs (deliveries, logout notices) this process is running. */
  jobsRunning(): number;
  /** The dependencies' states (checked at most every 10 s). */
  dependencies(): Promise<DependencyState[]>;
}

/** What a scrape answers: the exposition text and its content type. */
export interface MetricsSource {
  text(): Promise<string>;
  contentType: string;
}

/** A worker of `server.workers` (forked by cluster.ts): its primary adds the workers up. */
export function isClusterWorker(): boolean {
  return cluster.isWorker && process.env.GATEHOUSE_WORKER === '1';
}

/** Metrics off: every call costs one empty function call. */
export const NO_METRICS: Metrics = {
  registry: null,
  httpRequest: () => undefined,
  tokenIssued: () => undefined,
  tokenRefused: () => undefined,
  verification: () => undefined,
  fdsVerdict: () => undefined,
  delivery: () => undefined,
};

/** The request methods node's parser accepts are few, but a label gets only the usual ones. */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Latency buckets in seconds: from a cached JWKS answer to a slow password hash. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The Prometheus metrics of one server, in a registry of its own (tests run several servers). */
export class PromMetrics implements Metrics {
  readonly registry: Registry;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly tokens: Counter<'grant_type'>;
  private readonly refusals: Counter<'grant_type' | 'error'>;
  private readonly verifications: Counter<'method' | 'outcome' | 'error_code'>;
  private readonly verdicts: Counter<'rule' | 'phase' | 'action'>;
  private readonly deliveries: Counter<'channel' | 'kind' | 'outcome'>;

  constructor(sources: GaugeSources, opts: { defaultMetrics: boolean }) {
    // In a cluster worker the primary asks for the registry over IPC and adds the workers up.
    const worker = isClusterWorker();
    this.registry = worker ? new AggregatorRegistry() : new Registry();
    if (worker) AggregatorRegistry.setRegistries([this.registry]);
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

/**
 * The metrics of every worker of a cluster, added up (counters and histograms summed, as are the
 * gauges: connections, hashes and jobs of all the workers). For the primary's listener.
 */
export function clusterMetrics(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { text: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}

/** The metrics the config asks for: Prometheus ones, or none. */
export function createMetrics(config: { enabled: boolean; default_metrics: boolean }, sources: GaugeSources): Metrics {
  return config.enabled ? new PromMetrics(sources, { defaultMetrics: config.default_metrics }) : NO_METRICS;
}
