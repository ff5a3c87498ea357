import cluster, { type Worker } from 'node:cluster';
import { MemoryStore, type ClientRateLimitInfo, type Options, type Store } from 'express-rate-limit';
import type { RateLimitStores } from '../rate-limit';
import { DependencyUnavailable } from '@spec-first/engine';

/** Marks these messages among the others on a worker's IPC channel. */
const CHANNEL = 'pas-counts';
const WINDOWS = ['minute', 'day', 'ip'] as const;
type WindowName = (typeof WINDOWS)[number];

type Request =
  | { channel: typeof CHANNEL; type: 'increment'; id: number; key: string; windows: Array<{ name: WindowName; windowMs: number }> }
  | { channel: typeof CHANNEL; type: 'decrement' | 'reset'; key: string; name: WindowName };
type Reply = { channel: typeof CHANNEL; type: 'counted'; id: number; counts: Array<{ totalHits: number; resetMs: number }> };

const isCounts = (message: unknown): message is Request | Reply => (message as { channel?: unknown } | null)?.channel === CHANNEL;

/** How long a worker waits for the primary's count before the request is answered 503. */
const REPLY_TIMEOUT_MS = 2_000;

/** The primary did not answer: the counts cannot be read (a 503, as when Redis is down). */
class PrimaryUnavailable extends DependencyUnavailable {
  override readonly name = 'PrimaryUnavailable';
}

/**
 * A worker's rate-limit counters, held by the cluster primary: one message
 * per request counts a key in all its windows at once (both of a key's
 * windows, or the IP window), and the reply carries each count as of that
 * request. The primary answers messages one at a time, so every response
 * tells the count after its own request, as in one process.
 *
 * @example const stores = primaryCountStores(); await stores.incrementKey!('key:7') // [minute, day]
 */
export function primaryCountStores(): RateLimitStores & { detach(): void } {
  const worker = cluster.worker;
  if (!worker) throw new Error('primaryCountStores: not a cluster worker');
  // Each store is told its window by `init` (the rate-limit phase does it at start), as express-rate-limit tells its stores.
  const windowMs: Partial<Record<WindowName, number>> = {};
  const waiting = new Map<number, { resolve(counts: ClientRateLimitInfo[]): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
  let nextId = 0;
  const onMessage = (message: unknown): void => {
    if (!isCounts(message) || message.type !== 'counted') return;
    const pending = waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    clearTimeout(pending.timer);
    pending.resolve(message.counts.map(({ totalHits, resetMs }) => ({ totalHits, resetTime: new Date(resetMs) })));
  };
  worker.on('message', onMessage);
  const send = (message: Request): boolean => process.connected && process.send!(message);

  const increment = (key: string, names: WindowName[]): Promise<ClientRateLimitInfo[]> => {
    const windows: Array<{ name: WindowName; windowMs: number }> = [];
    for (const name of names) {
      const length = windowMs[name];
      if (length === undefined) return Promise.reject(new Error(`primaryCountStores: the ${name} window was never initialised`));
      windows.push({ name, windowMs: length });
    }
    return new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new PrimaryUnavailable('the cluster primary did not answer with the rate-limit counts'));
      }, REPLY_TIMEOUT_MS);
      waiting.set(id, { resolve, reject, timer });
      if (!send({ channel: CHANNEL, type: 'increment', id, key, windows })) {
        waiting.delete(id);
        clearTimeout(timer);
        reject(new PrimaryUnavailable('the cluster primary is gone'));
      }
    });
  };
  const store = (name: WindowName): Store => ({
    init: (options: Options) => {
      windowMs[name] = options.windowMs;
    },
    increment: async (key) => (await increment(key, [name]))[0]!,
    decrement: async (key) => void send({ channel: CHANNEL, type: 'decrement', key, name }),
    resetKey: async (key) => void send({ channel: CHANNEL, type: 'reset', key, name }),
  });
  return {
    minute: store('minute'),
    day: store('day'),
    ip: store('ip'),
    incrementKey: async (key) => {
      const [minute, day] = await increment(key, ['minute', 'day']);
      return [minute!, day!];
    },
    detach: () => void worker.off('message', onMessage),
  };
}

/**
 * The primary's side: one express-rate-limit MemoryStore per window, and the
 * workers' messages answered strictly one after another (the store's
 * increment hands back its live record, so a count is copied before the next
 * message is read).
 *
 * @example servePrimaryCounts(); for (let i = 0; i < n; i++) cluster.fork();
 */
export function servePrimaryCounts(): void {
  const stores = new Map<WindowName, MemoryStore>();
  const storeOf = (name: WindowName, windowMs: number): MemoryStore => {
    let store = stores.get(name);
    if (!store) {
      store = new MemoryStore();
      store.init({ windowMs } as Options);
      stores.set(name, store);
    }
    return store;
  };
  let queue = Promise.resolve();
  cluster.on('message', (from: Worker, message: unknown) => {
    if (!isCounts(message) || message.type === 'counted') return;
    queue = queue
      .then(async () => {
        if (message.type === 'increment') {
          const counts: Reply['counts'] = [];
          for (const window of message.windows) {
            const info = await storeOf(window.name, window.windowMs).increment(message.key);
            counts.push({ totalHits: info.totalHits, resetMs: info.resetTime?.getTime() ?? Date.now() + window.windowMs });
          }
          if (from.isConnected()) from.send({ channel: CHANNEL, type: 'counted', id: message.id, counts } satisfies Reply);
        } else {
          const store = stores.get(message.name);
          if (message.type === 'decrement') await store?.decrement(message.key);
          else await store?.resetKey(message.key);
        }
      })
      // A failed message must not stop the ones after it (the worker's wait times out into a 503).
      .catch((error: unknown) => console.error('rate-limit counts: a message failed', error));
  });
}
