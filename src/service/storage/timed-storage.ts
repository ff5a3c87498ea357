import { STORAGE_REPOSITORY_NAMES, type Storage } from './storage';

/** Receives the duration (seconds) of each repository call, named `repository.method`. */
export type QueryTimer = (operation: string) => (seconds: number) => void;

/**
 * The same storage, with every repository call timed: `pets.list`,
 * `apiKeys.findByHash`, ... (each is one query). Timed at the repository
 * rather than in Kysely so the label names what the service did, from a
 * fixed set, and the wait for a pooled connection counts too. The observer
 * of each method is bound once, so a call costs two clock reads.
 *
 * @example const timed = timedStorage(storage, (operation) => histogram.labels({ operation, backend: storage.backend }).observe);
 */
export function timedStorage(storage: Storage, timer: QueryTimer): Storage {
  const repositories = Object.fromEntries(STORAGE_REPOSITORY_NAMES.map((name) => [name, timedRepository(storage[name], name, timer)]));
  return {
    backend: storage.backend,
    ...(repositories as unknown as Pick<Storage, (typeof STORAGE_REPOSITORY_NAMES)[number]>),
    ping: () => storage.ping(),
    adoptionViolations: () => storage.adoptionViolations(),
    close: () => storage.close(),
    ...(storage.poolStats && { poolStats: () => storage.poolStats!() }),
  };
}

function timedRepository<T extends object>(repository: T, name: string, timer: QueryTimer): T {
  const timed = Object.create(repository) as Record<string, unknown>;
  for (const method of methodNames(repository)) {
    const call = (repository as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!.bind(repository);
    const observe = timer(`${name}.${method}`);
    timed[method] = async (...args: unknown[]) => {
      const startedAt = performance.now();
      try {
        return await call(...args);
      } finally {
        observe((performance.now() - startedAt) / 1000);
      }
    };
  }
  return timed as T;
}

/** Own and prototype methods (classes keep theirs on the prototype). */
function methodNames(object: object): string[] {
  const names = new Set<string>();
  for (let current = object; current && current !== Object.prototype; current = Object.getPrototypeOf(current)) {
    for (const name of Object.getOwnPropertyNames(current)) {
      if (name !== 'constructor' && typeof (object as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names];
}
