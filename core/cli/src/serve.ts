import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import {
  buildApp,
  CLUSTER_WORKER_ENV,
  createLogger,
  listen,
  startPrimary,
  type Gatehouse,
  type LoadedConfig,
  type RunningServer,
} from '@gatehouse-auth/core';

/**
 * Serves the config as `gatehouse start` does: `server.workers` processes (a primary forking
 * them), or this one listening; signals drain it. Resolves once it listens; it keeps running.
 */
export async function runServer(loaded: LoadedConfig): Promise<void> {
  const wanted = loaded.config.server.workers;
  const workers = wanted === 0 ? availableParallelism() : wanted;
  const isWorker = cluster.isWorker;
  if (workers > 1 && cluster.isPrimary) return runPrimary(loaded, workers, createLogger(loaded.config.log.level));
  // A worker's primary already migrated and runs the purge job.
  const gatehouse = await buildApp(loaded, { migrate: !isWorker });
  const running = await listen(gatehouse);
  exitOnSignals(running, gatehouse);
  if (!isWorker) gatehouse.startBackgroundJobs();
  gatehouse.logger.info(
    {
      port: running.port,
      ...portFields(running.listeners),
      issuer: gatehouse.config.issuer,
      plugins: gatehouse.plugins.map((p) => p.name),
    },
    'gatehouse listening',
  );
}

/**
 * The primary of `server.workers > 1`: the core's share first (`startPrimary`: migrates once,
 * the purge job, the plugins' `primary` hooks), then forks the workers (which share the port),
 * restarts a worker that dies, and on SIGTERM lets every worker drain.
 */
async function runPrimary(loaded: LoadedConfig, workers: number, logger: Gatehouse['logger']): Promise<void> {
  const primary = await startPrimary(loaded, logger);

  let stopping = false;
  const fork = (): Worker => cluster.fork(CLUSTER_WORKER_ENV);
  let listened = false;
  cluster.on('listening', () => (listened = true));
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // Failed before any worker listened: the config, which every worker would refuse alike.
    if (!listened && code !== 0) return void stop('SIGTERM', 1);
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    setTimeout(fork, 1000).unref();
  });
  for (let i = 0; i < workers; i++) fork();
  logger.info({ workers, ...portFields(primary.ports) }, 'gatehouse primary started');

  const stop = async (signal: NodeJS.Signals, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping workers');
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => Boolean(w));
    await Promise.all(
      alive.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
      ),
    );
    await primary.close();
    logger.info('all workers stopped');
    process.exit(exitCode);
  };
  // Not `stop` itself: a signal's listener is also handed the signal's number.
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

/**
 * SIGTERM (what orchestrators send): readiness turns 503 and the node keeps serving for
 * `server.shutdown_delay_ms` (the balancer's health check notices and stops sending; closing
 * connections at once would reset the requests already on their way), then finishes in-flight
 * requests and exits 0. SIGINT (Ctrl-C at a terminal) skips the delay.
 */
function exitOnSignals(running: RunningServer, gatehouse: Gatehouse): void {
  const onSignal = async (signal: NodeJS.Signals) => {
    const delayMs = signal === 'SIGTERM' ? gatehouse.config.server.shutdown_delay_ms : 0;
    gatehouse.beginShutdown();
    if (delayMs > 0) {
      gatehouse.logger.info({ signal, delayMs }, 'shutting down: not ready, still serving while balancers notice');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    gatehouse.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    running.shutdown().then(
      () => {
        gatehouse.logger.info('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        gatehouse.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', (signal) => void onSignal(signal));
  process.once('SIGINT', (signal) => void onSignal(signal));
}

/** The ports as log fields: `{ metricsPort: 9464 }`. */
function portFields(ports: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(ports).map(([name, port]) => [`${name}Port`, port]));
}
