import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';
import type { Stage } from '../pipeline/stage';

const DECIMAL_INTEGER = /^-?\d+$/;

/**
 * An integer path or query parameter must be written in decimal digits. The
 * validator reads parameters as JavaScript numbers, so `1e999` reached the
 * handler as Infinity (PostgreSQL then refused it: a 500), `0x10` as 16, ` 5`
 * as 5 and `1.0` as 1. Text that is no number, or a fraction, is left to the
 * validator's own message. Runs once the operation is matched (the path
 * parameters are in `req.params`) and before the validator parses them;
 * undefined when the operation has no integer parameter.
 *
 * @example const guard = decimalIntegerParameters(spec, op); if (guard) stages.push(guard);
 */
export function decimalIntegerParameters(spec: OpenApiDocument, op: SpecOperation): Stage | undefined {
  const shared = (spec.paths[op.path] as { parameters?: unknown[] } | undefined)?.parameters ?? [];
  const own = (op.operation as { parameters?: unknown[] }).parameters ?? [];
  // An operation's parameter replaces the path item's one of the same name and location.
  const declared = new Map<string, { where: 'path' | 'query'; name: string; integer: boolean }>();
  for (const parameter of [...shared, ...own]) {
    const { node } = resolveRef(spec, parameter);
    if (node.in !== 'path' && node.in !== 'query') continue;
    const schema = node.schema === undefined ? undefined : resolveRef(spec, node.schema).node;
    declared.set(`${node.in} ${String(node.name)}`, { where: node.in, name: String(node.name), integer: schema?.type === 'integer' });
  }
  const integers = [...declared.values()].filter((parameter) => parameter.integer);
  if (integers.length === 0) return undefined;
  return (req) => {
    for (const { where, name } of integers) {
      const value: unknown = where === 'path' ? req.params[name] : (req.query as Record<string, unknown>)[name];
      if (typeof value !== 'string' || DECIMAL_INTEGER.test(value)) continue;
      // Not a number, or a fraction: the validator's "must be integer" says it.
      const number = Number(value);
      if (value.trim() === '' || Number.isNaN(number) || (Number.isFinite(number) && !Number.isInteger(number))) continue;
      throw new ApiError(400, 'invalid_request', `${where === 'path' ? 'params' : 'query'}.${name} must be an integer written in decimal digits`);
    }
  };
}
