import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { MetricsSource } from './scrape.js';

/** The IPC messages of a scrape a worker passes on to the primary (`expose: admin`). */
const SCRAPE_REQUEST = 'gatehouse:metrics-scrape';
const SCRAPE_ANSWER = 'gatehouse:metrics-scraped';

interface ScrapeRequest {
  type: typeof SCRAPE_REQUEST;
  id: string;
}

interface ScrapeAnswer {
  type: typeof SCRAPE_ANSWER;
  id: string;
  text?: string;
}

/** How long a worker waits for the primary (which waits up to 5 s for every worker). */
const ANSWER_TIMEOUT_MS = 8000;

/**
 * The metrics of every worker of a cluster, added up (counters and histograms summed, as are the
 * gauges: connections, hashes and jobs of all the workers). prom-client asks each worker's
 * registry over IPC; a worker names its registry with `AggregatorRegistry.setRegistries`.
 */
function clusterMetrics(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { text: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}

/**
 * In the primary: the workers' metrics added up, for its own listener and for the scrapes
 * workers pass on, so a scrape on the main port is not one worker's at random. `stop` stops
 * answering the workers.
 */
export function primaryMetrics(): MetricsSource & { stop(): void } {
  const source = clusterMetrics();
  const onMessage = (worker: Worker, message: Partial<ScrapeRequest> | null) => {
    if (message?.type !== SCRAPE_REQUEST || typeof message.id !== 'string') return;
    const { id } = message;
    const answer = (text?: string) => {
      if (worker.isConnected()) worker.send({ type: SCRAPE_ANSWER, id, ...(text !== undefined ? { text } : {}) });
    };
    source.text().then(answer, () => answer());
  };
  cluster.on('message', onMessage);
  return { ...source, stop: () => void cluster.off('message', onMessage) };
}

/**
 * In a worker: answer the primary's requests with `registry`. prom-client starts answering them
 * once an `AggregatorRegistry` is made in the process, so one is made here, then names ours.
 */
export function answerPrimary(registry: Registry): void {
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

/** In a worker: the whole cluster's metrics, asked of the primary over IPC. */
export function metricsFromPrimary(contentType: string): MetricsSource {
  return {
    contentType,
    text: () =>
      new Promise<string>((resolve, reject) => {
        const id = randomUUID();
        const onMessage = (message: Partial<ScrapeAnswer> | null) => {
          if (message?.type !== SCRAPE_ANSWER || message.id !== id) return;
          done();
          if (typeof message.text === 'string') resolve(message.text);
          else reject(new Error('the primary could not collect the workers’ metrics'));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error('no answer from the primary'));
        }, ANSWER_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          process.off('message', onMessage);
        };
        process.on('message', onMessage);
        process.send!({ type: SCRAPE_REQUEST, id } satisfies ScrapeRequest);
      }),
  };
}
