import cluster, { type Worker } from 'node:cluster';
import type { ApiKeyRepository } from '../storage';
import { ExpiringBans, MemoryBanList } from '../rate-limit';
import type { SharedState } from './shared-state';
import { primaryCountStores, servePrimaryCounts } from './primary-counts';

/** Marks this module's messages among the others on a worker's IPC channel. */
const CHANNEL = 'pas-shared-state';

type SharedMessage =
  | { channel: typeof CHANNEL; type: 'ban'; principal: string; untilMs: number }
  | { channel: typeof CHANNEL; type: 'key-changed'; keyId: number };

const isShared = (message: unknown): message is SharedMessage => (message as { channel?: unknown } | null)?.channel === CHANNEL;

/**
 * The shared state of one worker of a `WORKERS=N` cluster (src/runtime/cluster.ts):
 *
 * - rate-limit counts live in the primary (primary-counts.ts: one message
 *   per request counts both of a key's windows, and the primary answers
 *   one message at a time, so every count is exact, and each response
 *   carries its own, whichever worker serves);
 * - a ban or a key change is sent to the primary, which passes it to every
 *   other worker (`servePrimarySharedState`); bans are also stored, as in
 *   one process, so a worker started later sees them through the key.
 *
 * @example const shared = clusterWorkerState(storage.apiKeys); // in a cluster worker only
 */
export function clusterWorkerState(apiKeys: ApiKeyRepository): SharedState {
  const worker = cluster.worker;
  if (!worker) throw new Error('clusterWorkerState: not a cluster worker');
  const bans = new MemoryBanList(apiKeys);
  const listeners = new Set<(keyId: number) => void>();
  const onMessage = (message: unknown): void => {
    if (!isShared(message)) return;
    if (message.type === 'ban') bans.remember(message.principal, message.untilMs);
    else for (const listener of listeners) listener(message.keyId);
  };
  worker.on('message', onMessage);
  const stores = primaryCountStores();
  /** To every other worker, through the primary. */
  const relay = (message: SharedMessage): void => {
    if (process.connected) process.send!(message);
  };
  return {
    kind: 'cluster',
    stores,
    banList: {
      bannedUntil: (principal, now) => bans.bannedUntil(principal, now),
      async ban(caller, untilMs) {
        relay({ channel: CHANNEL, type: 'ban', principal: caller.principal, untilMs });
        await bans.ban(caller, untilMs);
      },
    },
    keyChanges: {
      subscribe: (listener) => void listeners.add(listener),
      publish: async (keyId) => {
        for (const listener of listeners) listener(keyId);
        relay({ channel: CHANNEL, type: 'key-changed', keyId });
      },
    },
    async ping() {
      // The counts live in the primary: without it, nothing can be counted.
      if (!process.connected) throw new Error('the cluster primary is gone');
    },
    async close() {
      worker.off('message', onMessage);
      stores.detach();
    },
  };
}

/**
 * The primary's side: holds the rate-limit counts of every worker, and
 * passes each ban and key change on to the other workers (and a live ban
 * to a worker that starts later).
 *
 * @example servePrimarySharedState(); for (let i = 0; i < n; i++) cluster.fork();
 */
export function servePrimarySharedState(now: () => number = Date.now): void {
  servePrimaryCounts();
  const bans = new ExpiringBans<string>();
  cluster.on('message', (from: Worker, message: unknown) => {
    if (!isShared(message)) return;
    if (message.type === 'ban') bans.remember(message.principal, message.untilMs);
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker && worker !== from && worker.isConnected()) worker.send(message);
    }
  });
  cluster.on('online', (worker: Worker) => {
    for (const [principal, untilMs] of bans.live(now())) worker.send({ channel: CHANNEL, type: 'ban', principal, untilMs } satisfies SharedMessage);
  });
}
