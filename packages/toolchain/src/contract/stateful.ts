/**
 * ensure_resource_availability (Schemathesis' name): what an operation
 * created is then readable with the item operation of the same collection
 * (POST /pets -> GET /pets/{petId}) and equal, with the fields that were sent
 * (or their defaults); an item a list returned is readable by its id and equal.
 * (use_after_free needs a DELETE; a contract without one has nothing to check.)
 */
import { isDeepStrictEqual } from 'node:util';
import type { Operation } from './spec';

/** The GET operation on `{collection}/{id}`, if the contract has one. */
export function itemOperationOf(operations: Operation[], collection: Operation): Operation | undefined {
  return operations.find(
    (candidate) =>
      candidate.method === 'GET' &&
      candidate.parameters.filter((p) => p.in === 'path').length === 1 &&
      new RegExp(`^${collection.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&')}/\\{[^}/]+\\}$`).test(candidate.path),
  );
}

/** Ids in a response body: the object's `id`, or each array item's. */
export function idsIn(body: unknown): unknown[] {
  if (Array.isArray(body)) return body.flatMap((item) => idsIn(item));
  if (body && typeof body === 'object' && 'id' in body) return [(body as { id: unknown }).id];
  return [];
}

/**
 * Differences between what was sent to create a resource and what came back:
 * each sent property must come back equal, each omitted one with a default must
 * come back as the default. Returns one line per difference.
 *
 * @example sentFieldsDiffer(createPet, { name: 'Rex', categoryId: 1 }, { id: 1, name: 'Rex', categoryId: 1, status: 'available' }) // []
 */
export function sentFieldsDiffer(operation: Operation, sent: unknown, created: unknown): string[] {
  const schema = operation.body?.schema;
  if (!schema?.properties || !sent || typeof sent !== 'object' || !created || typeof created !== 'object') return [];
  const differences: string[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const expected = name in sent ? (sent as Record<string, unknown>)[name] : property.default;
    if (expected === undefined) continue;
    const actual = (created as Record<string, unknown>)[name];
    if (!isDeepStrictEqual(actual, expected)) differences.push(`${name}: sent/default ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
  return differences;
}
