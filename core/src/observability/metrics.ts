import cluster from 'node:cluster';

/**
 * What the server counts. Every label value comes from a bounded set the code or the config
 * defines (route templates, registered grant types, methods, rules and channels, error codes):
 * never a raw path, an identifier, a client id or anything a caller typed (decision 25).
 */
export interface Metrics {
  /** Whether anything counts: without it the request observer is left out. */
  readonly enabled: boolean;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  tokenIssued(grantType: string): void;
  /** A token request refused: its grant type (or `unsupported`) and the OAuth error code. */
  tokenRefused(grantType: string, error: string): void;
  /** A verification request: `success`, or the error code it was answered with. */
  verification(method: string, errorCode: string | null): void;
  fdsVerdict(rule: string, phase: string, action: string): void;
  delivery(channel: string, kind: string, outcome: 'sent' | 'failed'): void;
}

/** What the `gatehouse` command's primary puts in a worker's environment when it forks it. */
export const CLUSTER_WORKER_ENV: Readonly<Record<string, string>> = { GATEHOUSE_WORKER: '1' };

/** A worker of `server.workers` (forked with `CLUSTER_WORKER_ENV`): its primary runs the `primary` hooks. */
export function isClusterWorker(): boolean {
  return cluster.isWorker && process.env.GATEHOUSE_WORKER === '1';
}

/** Metrics off: every call costs one empty function call. */
export const NO_METRICS: Metrics = {
  enabled: false,
  httpRequest: () => undefined,
  tokenIssued: () => undefined,
  tokenRefused: () => undefined,
  verification: () => undefined,
  fdsVerdict: () => undefined,
  delivery: () => undefined,
};

/**
 * The metrics the core's parts hold: `NO_METRICS` until a plugin provides the `metrics` service
 * (`@gatehouse-auth/metrics-prometheus`, decision 67), then that one. The services made before
 * the plugins register hold this, so each call goes to whichever is current.
 */
export function metricsSlot(): Metrics & { use(provided: Metrics): void } {
  let current = NO_METRICS;
  return {
    get enabled() {
      return current.enabled;
    },
    httpRequest: (method, route, status, seconds) => current.httpRequest(method, route, status, seconds),
    tokenIssued: (grantType) => current.tokenIssued(grantType),
    tokenRefused: (grantType, error) => current.tokenRefused(grantType, error),
    verification: (method, errorCode) => current.verification(method, errorCode),
    fdsVerdict: (rule, phase, action) => current.fdsVerdict(rule, phase, action),
    delivery: (channel, kind, outcome) => current.delivery(channel, kind, outcome),
    use: (provided) => void (current = provided),
  };
}
