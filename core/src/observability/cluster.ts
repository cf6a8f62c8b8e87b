import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { clusterMetrics, type MetricsSource } from './metrics.js';

/** The IPC messages of a scrape a worker passes on to the primary (`metrics.expose: admin`). */
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
 * In the primary: the workers' metrics added up, for its own listener and for the scrapes
 * workers pass on, so a scrape on the main port is not one worker's at random.
 */
export function primaryMetrics(): MetricsSource {
  const source = clusterMetrics();
  cluster.on('message', (worker, message: Partial<ScrapeRequest> | null) => {
    if (message?.type !== SCRAPE_REQUEST || typeof message.id !== 'string') return;
    const { id } = message;
    const answer = (text?: string) => {
      if (worker.isConnected()) worker.send({ type: SCRAPE_ANSWER, id, ...(text !== undefined ? { text } : {}) });
    };
    source.text().then(answer, () => answer());
  });
  return source;
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
