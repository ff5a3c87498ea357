/**
 * `node --import tsx bench/serializer.ts`: what a serializer compiled from the
 * response schema (fast-json-stringify, Fastify's) would save over
 * `JSON.stringify` on the pages the project sends (listPets of v1: an array
 * of `Pet`, from openapi/v1/openapi.yaml), per page size, in this process;
 * and whether it sends the same bytes. It is taken from the Fastify peer's
 * own node_modules (installed by the bench when missing), never a dependency
 * of the project.
 *
 * The rule: a serializer may not change what is sent. A body with a
 * property the schema does not declare (what the sampled response checks
 * exist to catch) must reach the client as the handler returned it.
 *
 * Writes bench/results/serializer.md.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { loadDocument as loadContract } from '@spec-first/engine/testing';
import { PEERS, ROOT, installPeer } from './lib';

type Stringify = (value: unknown) => string;

/** The schema with its local $refs replaced by what they point at (the Pet schema has no cycles). */
function inlined(document: unknown, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => inlined(document, item));
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    return inlined(document, target);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(document, value)]));
}

/** Median µs per call of `fn` over `rounds` rounds of `calls` calls. */
function timed(fn: () => unknown, calls: number, rounds = 7): number {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    samples.push(Number(process.hrtime.bigint() - started) / 1000 / calls);
  }
  return samples.sort((a, b) => a - b)[Math.floor(rounds / 2)]!;
}

async function main(): Promise<void> {
  await installPeer('fastify-peer');
  const peerRequire = createRequire(path.join(ROOT, PEERS['fastify-peer'].folder, 'server.mjs'));
  const fastJson = peerRequire('fast-json-stringify') as (schema: object) => Stringify;
  const spec = await loadContract(path.join(ROOT, 'openapi/v1/openapi.yaml'));
  const schemas = (spec.components?.['schemas'] ?? {}) as Record<string, unknown>;
  const page = inlined(spec, schemas['Pets']) as object;
  const compiled = fastJson(page);
  const statuses = ['available', 'pending', 'adopted'];
  const pets = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ id: i + 1, name: `Pet number ${i + 1}`, categoryId: (i % 5) + 1, status: statuses[i % 3] }));

  const rows: string[] = [];
  for (const size of [1, 20, 100]) {
    const body = pets(size);
    if (compiled(body) !== JSON.stringify(body)) throw new Error(`a page of ${size}: the compiled serializer sends other bytes`);
    // Warm both up before timing.
    timed(() => JSON.stringify(body), 20_000, 1);
    timed(() => compiled(body), 20_000, 1);
    const calls = Math.max(2_000, Math.round(200_000 / size));
    const native = timed(() => JSON.stringify(body), calls);
    const fast = timed(() => compiled(body), calls);
    rows.push(`| ${size} | ${JSON.stringify(body).length} | ${native.toFixed(2)} | ${fast.toFixed(2)} | ${(native - fast).toFixed(2)} |`);
  }
  // What the sampled response checks exist to catch: a property the contract does not declare.
  const leaked = [{ id: 1, name: 'Rex', categoryId: 1, status: 'available', ownerEmail: 'someone@example.com' }];
  const sentNative = JSON.stringify(leaked);
  const sentCompiled = compiled(leaked);

  const markdown = [
    '# A serializer compiled from the response schema, against JSON.stringify',
    '',
    "listPets of v1 (an array of `Pet`, its schema from openapi/v1/openapi.yaml), serialized in this process; median µs per page over 7 rounds. fast-json-stringify from the Fastify peer's own node_modules.",
    '',
    '| pets per page | bytes | JSON.stringify µs | fast-json-stringify µs | saved µs per response |',
    '|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    'A page with a property the schema does not declare (`ownerEmail`):',
    '',
    `- JSON.stringify sends \`${sentNative}\``,
    `- fast-json-stringify sends \`${sentCompiled}\``,
    '',
    sentCompiled === sentNative
      ? 'Both send the same bytes.'
      : "The compiled serializer drops the undeclared property: what the client receives would no longer be what the handler answered, and the sampled response checks could not see the leak. By the issue's rule it is not taken.",
    '',
    `_Node ${process.version}, ${os.cpus()[0]?.model ?? ''} × ${os.cpus().length}, ${new Date().toISOString()}; \`node --import tsx bench/serializer.ts\`._`,
    '',
  ].join('\n');
  console.log(markdown);
  writeFileSync(path.join(ROOT, 'bench', 'results', 'serializer.md'), markdown);
}

main().catch((error: unknown) => {
  console.error(`bench:serializer: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
