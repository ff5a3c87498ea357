import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** Marks this module's messages on a worker's IPC channel. */
const CHANNEL = 'pas-metrics';
/** A scrape waits this long for the primary before failing. */
const TIMEOUT_MS = 5_000;

type MetricsMessage = { channel: typeof CHANNEL; id: number; text?: string; error?: string };
const isMetricsMessage = (message: unknown): message is MetricsMessage => (message as { channel?: unknown } | null)?.channel === CHANNEL;

/**
 * With WORKERS=N a scrape of GET /metrics reaches one worker: it asks the
 * primary, which gathers every worker's registries (prom-client's
 * AggregatorRegistry: counters and histograms summed) so the scrape sees the
 * whole instance, whichever worker answers. Returns the worker's `render`.
 *
 * @example const render = clusterWorkerMetrics([registry, processRegistry]);
 */
export function clusterWorkerMetrics(registries: Registry[]): () => Promise<string> {
  AggregatorRegistry.setRegistries(registries);
  new AggregatorRegistry(); // answers the primary's requests for this worker's metrics
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (!isMetricsMessage(message)) return;
    const request = pending.get(message.id);
    if (!request) return;
    pending.delete(message.id);
    clearTimeout(request.timer);
    if (message.text === undefined) request.reject(new Error(`the cluster primary could not gather the metrics: ${message.error}`));
    else request.resolve(message.text);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('the cluster primary did not send the metrics in time'));
      }, TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      process.send!({ channel: CHANNEL, id } satisfies MetricsMessage);
    });
}

/**
 * The primary's side: gathers every worker's metrics when one asks.
 *
 * @example serveClusterMetrics(); // in the primary, before forking
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMetricsMessage(message)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ channel: CHANNEL, id: message.id, text } satisfies MetricsMessage),
      (error: Error) => worker.isConnected() && worker.send({ channel: CHANNEL, id: message.id, error: error.message } satisfies MetricsMessage),
    );
  });
}
