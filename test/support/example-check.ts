import type { OpenApiDocument } from '@spec-first/engine';
import { schemaValidator, escapePointer } from '@spec-first/engine/testing';

type Node = Record<string, unknown>;

/** Keywords whose values are data, not schemas: never searched for examples. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'enum', 'const', 'default']);

/**
 * Every example of the contract that does not validate against its schema:
 * media type, parameter and header `example` / `examples` (including
 * `$ref`s to components/examples), and schema `examples` at any depth.
 * Each entry names where the example is and why it fails.
 *
 * @example invalidExamples(loadSpec()) // [] when every example is valid
 */
export function invalidExamples(spec: OpenApiDocument): string[] {
  const validator = schemaValidator(spec, { direction: 'response', allErrors: true });
  const problems: string[] = [];
  const check = (schemaPointer: string, value: unknown, where: string): void => {
    const problem = validator.explain(schemaPointer, value);
    if (problem) problems.push(`${where}: ${problem}`);
  };
  const resolve = (node: Node | undefined): Node | undefined => {
    while (typeof node?.['$ref'] === 'string') {
      node = node['$ref']
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>((value, key) => (value as Node | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec) as Node | undefined;
    }
    return node;
  };

  const walk = (node: unknown, pointer: string, inSchema: boolean): void => {
    if (typeof node !== 'object' || node === null) return;
    const object = node as Node;
    const isArray = Array.isArray(node);
    if (inSchema && !isArray) {
      if (Array.isArray(object['examples'])) {
        for (const [i, value] of object['examples'].entries()) check(pointer, value, `${pointer}/examples/${i}`);
      }
      if ('example' in object) check(pointer, object['example'], `${pointer}/example`);
    } else if (!isArray && typeof object['schema'] === 'object') {
      // A media type, parameter or header object: its examples follow its schema.
      if ('example' in object) check(`${pointer}/schema`, object['example'], `${pointer}/example`);
      for (const [name, example] of Object.entries((object['examples'] ?? {}) as Record<string, Node | undefined>)) {
        const resolved = resolve(example);
        if (resolved && 'value' in resolved) check(`${pointer}/schema`, resolved['value'], `${pointer}/examples/${name}`);
      }
    }
    for (const [key, child] of Object.entries(object)) {
      if (DATA_KEYWORDS.has(key)) continue;
      const childPointer = `${pointer}/${escapePointer(key)}`;
      walk(child, childPointer, inSchema || key === 'schema' || childPointer.startsWith('/components/schemas/'));
    }
  };
  walk(spec, '', false);
  return problems;
}
