import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { essence, mediaKind } from '../contract/media-types';
import { escapePointer, resolveRef } from '../contract/refs';
import { IGNORED_HEADERS, shapeOf, type Parameter } from './styles';

/** Where a parameter is, as OpenAPI names it (`querystring`: 3.2's whole query string as one value). */
export type ParameterLocation = 'path' | 'query' | 'querystring' | 'header' | 'cookie';

/** A parameter an operation declares: how it is read, and its declaration as written (resolved), for the request validator's document. */
export interface DeclaredParameter extends Parameter {
  in: ParameterLocation;
  declaration: Record<string, unknown>;
}

/**
 * The operation's parameters: the path item's, replaced by the operation's
 * own of the same name and location; header parameters OpenAPI says to
 * ignore (`Accept`, `Content-Type`, `Authorization`) left out.
 *
 * @example declaredParameters(spec, op).map((parameter) => `${parameter.in} ${parameter.name}`) // ['query limit', 'query status']
 */
export function declaredParameters(spec: OpenApiDocument, op: SpecOperation): DeclaredParameter[] {
  const declared = new Map<string, DeclaredParameter>();
  const lists: Array<[unknown[], string]> = [
    [(op.pathItem['parameters'] as unknown[] | undefined) ?? [], `/paths/${escapePointer(op.path)}/parameters`],
    [(op.operation['parameters'] as unknown[] | undefined) ?? [], `${op.pointer}/parameters`],
  ];
  for (const [list, base] of lists) {
    list.forEach((entry, index) => {
      const { node, ref } = resolveRef(spec, entry);
      const location = node['in'] as ParameterLocation;
      const name = String(node['name']);
      if (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) return;
      const at = ref ? ref.slice(1) : `${base}/${index}`;
      const content = node['content'] as Record<string, { schema?: unknown }> | undefined;
      const contentType = content ? Object.keys(content)[0] : undefined;
      const pointer = content
        ? contentType && content[contentType]?.schema !== undefined
          ? `${at}/content/${escapePointer(contentType)}/schema`
          : undefined
        : node['schema'] !== undefined
          ? `${at}/schema`
          : undefined;
      const schema = pointer ? resolveRef(spec, resolveRef(spec, { $ref: `#${pointer}` }).node).node : {};
      const style =
        (node['style'] as string | undefined) ??
        (location === 'query' || location === 'cookie' ? 'form' : location === 'querystring' ? 'querystring' : 'simple');
      declared.set(`${location} ${location === 'header' ? name.toLowerCase() : name}`, {
        name,
        in: location,
        required: location === 'path' || node['required'] === true,
        style,
        explode: (node['explode'] as boolean | undefined) ?? (style === 'form' || style === 'cookie'),
        pointer,
        json: contentType !== undefined && mediaKind(essence(contentType)) === 'json',
        shape: shapeOf(spec, schema),
        default: schema['default'],
        declaration: node,
      });
    });
  }
  return [...declared.values()];
}

/**
 * Whether express-openapi-validator reads this parameter. It matches path
 * parameters itself, in `simple` style (path-to-regexp gives it the segment's
 * decoded text): a path parameter in `label` or `matrix` style, or an array
 * or object one, would reach it unread, so the engine's own Ajv checks those.
 * It reads every other parameter from the values the parameters phase hands it,
 * but those only 3.2 has, which it does not know: `in: querystring` and
 * `style: cookie` (the engine checks them).
 */
export const validatorReads = (parameter: Pick<Parameter, 'in' | 'json' | 'style' | 'shape'>): boolean =>
  parameter.in !== 'querystring' &&
  parameter.style !== 'cookie' &&
  (parameter.in !== 'path' || parameter.json || (parameter.style === 'simple' && parameter.shape.kind === 'primitive'));
