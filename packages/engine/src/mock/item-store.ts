import { randomUUID } from 'node:crypto';
import type { ResourcePair } from './resource-pairs';

/** An item as the stateful mock keeps it: its value, and how many times it was written (1 when created). */
export interface StoredItem {
  readonly value: Readonly<Record<string, unknown>>;
  /** Incremented on every change: what an ETag of the item would be made from. */
  readonly version: number;
}

/**
 * What the stateful mock keeps, in memory, for the life of the process: the
 * items of each collection (a collection path with its parent parameters'
 * values, so `/boards/1/cards` and `/boards/2/cards` are two), by id, in the
 * order they were created.
 *
 * @example const store = new ItemStore(); store.put(store.collectionKey(pair, { boardId: 1 }), '3', { id: 3 });
 */
export class ItemStore {
  private readonly collections = new Map<string, Map<string, StoredItem>>();
  private readonly counters = new Map<ResourcePair, number>();

  /** The key of one collection of a pair: its path with the values of its parent parameters. */
  collectionKey(pair: ResourcePair, params: Readonly<Record<string, unknown>>): string {
    return JSON.stringify([pair.collection, ...pair.parents.map((name) => String(params[name]))]);
  }

  /** A new id of a pair, of the kind its id property wants (ids are never reused, whichever collection of the pair they go to). */
  nextId(pair: ResourcePair): number | string {
    if (pair.idKind === 'uuid') return randomUUID();
    const next = (this.counters.get(pair) ?? 0) + 1;
    this.counters.set(pair, next);
    return pair.idKind === 'integer' ? next : String(next);
  }

  get(collection: string, id: string): StoredItem | undefined {
    return this.collections.get(collection)?.get(id);
  }

  list(collection: string): StoredItem[] {
    return [...(this.collections.get(collection)?.values() ?? [])];
  }

  /** Stores `value` as the item `id`: version 1 when new, the next version when it replaces one. */
  put(collection: string, id: string, value: Readonly<Record<string, unknown>>): StoredItem {
    let items = this.collections.get(collection);
    if (!items) {
      items = new Map();
      this.collections.set(collection, items);
    }
    const stored = { value, version: (items.get(id)?.version ?? 0) + 1 };
    items.set(id, stored);
    return stored;
  }

  /** Whether there was such an item. */
  delete(collection: string, id: string): boolean {
    return this.collections.get(collection)?.delete(id) ?? false;
  }
}
