import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { essence, mediaKind, negotiate } from '../contract/media-types';
import { escapePointer, resolveRef } from '../contract/refs';
import { describesEventFields, itemSchemaPointer } from '../contract/item-schema';
import { ApiError } from '../errors/api-error';
import type { Stage } from '../stage/stage';
import { contextOf } from '../context/request-context';
import { sequentialFormat } from './sequential';

/** The media types a response of `status` may be sent as (XML left out: refused when the contract is loaded), in document order. */
export interface Representations {
  /** For one status: its declared media types (none: the response has no body). */
  of(status: number): readonly string[];
  /** For one status: the media type an answer that names none is sent as (JSON first); undefined when none is declared. */
  preferred(status: number): string | undefined;
  /** Every media type of the successful (2xx) responses. */
  readonly successful: readonly string[];
  /** Whether a successful response is declared in a sequential media type (a stream): only then is an answer looked at as one. */
  readonly streams: boolean;
  /** Whether the response of `status` in `mediaType` has a schema to check a body against (some documents give only examples). */
  hasSchema(status: number, mediaType: string): boolean;
  /**
   * Where the schema of one item of a sequential media type (a stream) is, as
   * a JSON pointer into the document: 3.2's `itemSchema`, else (3.0, 3.1) the
   * `items` of its `type: array` schema; undefined when it has none.
   */
  itemSchema(status: number, mediaType: string): string | undefined;
  /** For Server-Sent Events: whether the item schema describes each event's fields (true) or its data (false); undefined without one. */
  itemsAreEvents(status: number, mediaType: string): boolean | undefined;
}

/**
 * The response media types an operation declares, by status: the exact
 * status, else its range (`2XX`), else `default`.
 *
 * @example representations(spec, op).of(200) // ['application/json', 'text/csv']
 */
export function representations(spec: OpenApiDocument, op: SpecOperation): Representations {
  const responses = (op.operation['responses'] ?? {}) as Record<string, unknown>;
  const typesOf = (key: string | undefined): string[] => {
    if (key === undefined || responses[key] === undefined) return [];
    const content = resolveRef(spec, responses[key]).node['content'] as Record<string, unknown> | undefined;
    return Object.keys(content ?? {}).filter((type) => mediaKind(type) !== 'xml');
  };
  const keyOf = (status: number): string | undefined => {
    const exact = String(status);
    if (exact in responses) return exact;
    const range = `${exact[0]}XX`;
    if (range in responses) return range;
    return 'default' in responses ? 'default' : undefined;
  };
  const successful = [
    ...new Set(
      Object.keys(responses)
        .filter((key) => /^2(\d\d|XX)$/i.test(key))
        .flatMap((key) => typesOf(key)),
    ),
  ];
  const hasSchema = (status: number, mediaType: string): boolean => {
    const key = keyOf(status);
    if (key === undefined) return false;
    const content = (resolveRef(spec, responses[key]).node['content'] ?? {}) as Record<string, { schema?: unknown } | undefined>;
    const media = Object.entries(content).find(([type]) => essence(type) === essence(mediaType))?.[1];
    return media?.schema !== undefined;
  };
  const itemSchema = (status: number, mediaType: string): string | undefined => {
    const key = keyOf(status);
    if (key === undefined) return undefined;
    const { node: response, ref } = resolveRef(spec, responses[key]);
    const content = (response['content'] ?? {}) as Record<string, unknown>;
    const declaredType = Object.keys(content).find((type) => essence(type) === essence(mediaType));
    if (declaredType === undefined) return undefined;
    const responsePointer = ref ? ref.replace(/^#/, '') : `${op.pointer}/responses/${escapePointer(key)}`;
    return itemSchemaPointer(spec, `${responsePointer}/content/${escapePointer(declaredType)}`);
  };
  const streams = successful.some((type) => sequentialFormat(type) !== undefined);
  const itemsAreEvents = (status: number, mediaType: string): boolean | undefined => {
    const pointer = itemSchema(status, mediaType);
    return pointer === undefined ? undefined : describesEventFields(resolveRef(spec, { $ref: `#${pointer}` }).node);
  };
  // Asked on every response: found once per status.
  const byStatus = new Map<number, { types: readonly string[]; preferred: string | undefined }>();
  const forStatus = (status: number): { types: readonly string[]; preferred: string | undefined } => {
    let found = byStatus.get(status);
    if (!found) {
      const types = typesOf(keyOf(status));
      found = { types, preferred: jsonFirst(types)[0] };
      byStatus.set(status, found);
    }
    return found;
  };
  return {
    of: (status) => forStatus(status).types,
    preferred: (status) => forStatus(status).preferred,
    successful,
    streams,
    hasSchema,
    itemSchema,
    itemsAreEvents,
  };
}

/** JSON first: what an answer that does not name its media type is sent as. */
export const jsonFirst = (types: readonly string[]): string[] => [
  ...types.filter((type) => mediaKind(type) === 'json'),
  ...types.filter((type) => mediaKind(type) !== 'json'),
];

/**
 * The negotiation of one operation, before its handler runs: the media
 * types its successful responses declare are offered (JSON first), the
 * client's `Accept` picks (RFC 9110 12.5.1), and when it accepts none of
 * them the answer is 406 `not_acceptable`, naming what it could have. An
 * operation whose successful responses have no body has nothing to
 * negotiate.
 *
 * @example stages.push(negotiation(representations(spec, op)));
 */
export function negotiation(declared: Representations): Stage | undefined {
  const offered = jsonFirst(declared.successful);
  if (offered.length === 0) return undefined;
  const [only] = offered;
  const describe = offered.map(essence).join(', ');
  return (req) => {
    const accept = req.headers.accept;
    const chosen = accept === undefined || accept === '*/*' ? only : negotiate(offered, accept);
    if (chosen === undefined) throw new ApiError(406, 'not_acceptable', `Accept allows none of the media types this operation answers with: ${describe}`);
    contextOf(req).preferredMediaType = chosen;
  };
}
