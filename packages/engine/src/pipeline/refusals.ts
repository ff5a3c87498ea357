import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { isOpenApi32, listOperations } from '../contract/document';
import http from 'node:http';
import { essence, mediaKind } from '../contract/media-types';
import { holdsNames } from '../contract/extensions';
import { escapePointer, resolveRef } from '../contract/refs';
import { schemaValidator } from '../contract/schemas';
import { effectiveSecurity } from '../security/requirements';
import { servedSchemes } from '../security/schemes';

/**
 * What the engine will not do with a document, said when it is loaded rather
 * than found out by a client:
 *
 * - `errors` stop the start (a document that cannot be served as written: a
 *   requirement naming a scheme the document does not define, a parameter
 *   style its location does not have, a schema that does not compile);
 * - `warnings` name what is refused while the rest is served: XML bodies
 *   (each operation and media type; the operation's other media types keep
 *   working), security schemes the engine cannot check (their requirements
 *   always fail: 401), oauth2/openIdConnect schemes without a key set to
 *   verify tokens with, and events (webhooks, callbacks: the server does not
 *   send them).
 */
export interface Refusals {
  errors: string[];
  warnings: string[];
}

/** Styles each parameter location has (OpenAPI 3.x "Style Values"). */
const STYLES: Readonly<Record<string, readonly string[]>> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  // 3.2: `cookie` (values as the Cookie header carries them); a `querystring` parameter has no style, its `content` says how it is read.
  cookie: ['form', 'cookie'],
  querystring: [],
};

/** The methods a request can arrive with: what Node's HTTP parser accepts, but CONNECT (a tunnel, not a request for a resource). */
const ROUTABLE_METHODS: ReadonlySet<string> = new Set(http.METHODS.filter((method) => method !== 'CONNECT'));

export interface RefusalOptions {
  /** The label of the document in messages: `openapi/v3/openapi.yaml`. */
  label: string;
  /** Whether access tokens can be verified (OAUTH2_JWKS_URL is set). */
  tokensVerifiable: boolean;
}

/** How many times `key` appears as a keyword in a tree of schemas (`names`: the node's own members are names, as in `components.schemas`; a property of that name is not counted). */
function countKey(node: unknown, key: string, names = false): number {
  if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + countKey(item, key), 0);
  if (node === null || typeof node !== 'object') return 0;
  let count = 0;
  for (const [name, value] of Object.entries(node)) {
    if (!names && name === key) count++;
    count += countKey(value, key, holdsNames(name, names));
  }
  return count;
}

/** Whether a `querystring` parameter's content is one the engine reads: JSON, or form fields. */
function querystringReadable(parameter: { content?: Record<string, unknown> }): boolean {
  const types = Object.keys(parameter.content ?? {});
  return types.length === 1 && (mediaKind(types[0]!) === 'json' || mediaKind(types[0]!) === 'form');
}

/** @example const { errors, warnings } = contractRefusals(spec, { label: 'openapi/v3/openapi.yaml', tokensVerifiable: false }); */
export function contractRefusals(spec: OpenApiDocument, options: RefusalOptions): Refusals {
  const errors: string[] = [];
  const warnings: string[] = [];
  const at = (op: SpecOperation): string => `${options.label}: ${op.method.toUpperCase()} ${op.path} (${op.operationId})`;
  const definitions = spec.components?.securitySchemes ?? {};
  const served = servedSchemes(definitions);

  for (const [name, raw] of Object.entries(definitions)) {
    // 3.2: a scheme marked deprecated is still served; its users should move off it, and the published document says so.
    if ((resolveRef(spec, raw).node as { deprecated?: unknown }).deprecated === true) {
      warnings.push(`${options.label}: the security scheme ${name} is deprecated: still accepted, and marked deprecated in the published document`);
    }
    if (served.has(name)) {
      const scheme = served.get(name)!;
      if ((scheme.type === 'oauth2' || scheme.type === 'openIdConnect') && !options.tokensVerifiable) {
        warnings.push(
          `${options.label}: the ${scheme.type} scheme ${name} needs OAUTH2_JWKS_URL (or, for an oauth2 scheme with oauth2MetadataUrl, OAUTH2_AUDIENCE) to verify access tokens; ` +
            'until it is set, its requirements answer 401 saying so',
        );
      }
      continue;
    }
    const definition = resolveRef(spec, raw).node as { type?: string; scheme?: string; in?: string };
    const what =
      definition.type === 'http'
        ? `http scheme "${definition.scheme}"`
        : definition.type === 'apiKey'
          ? `apiKey in "${definition.in}"`
          : `type "${definition.type}"`;
    warnings.push(
      `${options.label}: the security scheme ${name} (${what}) is not supported ` +
        '(http bearer and basic, apiKey in header, query or cookie, oauth2 and openIdConnect are): its requirements always answer 401',
    );
  }

  const request = schemaValidator(spec, { direction: 'request' });
  const response = schemaValidator(spec, { direction: 'response' });
  const compile = (validator: typeof request, pointer: string, where: string): void => {
    try {
      validator.compile(pointer);
    } catch (error) {
      errors.push(`${where}: the schema at #${pointer} does not compile: ${(error as Error).message}`);
    }
  };

  let events = Object.keys(spec.webhooks ?? {}).length;
  for (const op of listOperations(spec)) {
    // Some published documents write variants of one path as `/path#variant`: a client never sends a fragment, so no request can reach them.
    if (/[#?]/.test(op.path)) {
      warnings.push(
        `${at(op)}: the path contains "${/[#?]/.exec(op.path)![0]}", which no request path can ` +
          '(a fragment or query string is not part of the path): the operation is never routed',
      );
    }
    if (!ROUTABLE_METHODS.has(op.method.toUpperCase())) {
      errors.push(`${at(op)}: no request can arrive with the method ${op.method.toUpperCase()}: the HTTP server accepts ${[...ROUTABLE_METHODS].join(', ')}`);
    }
    for (const requirement of effectiveSecurity(spec, op)) {
      for (const name of Object.keys(requirement)) {
        if (!(name in definitions)) errors.push(`${at(op)}: its security names the scheme ${name}, which components.securitySchemes does not define`);
      }
    }
    const levels = [
      { list: op.pathItem['parameters'], base: `/paths/${escapePointer(op.path)}/parameters` },
      { list: op.operation['parameters'], base: `${op.pointer}/parameters` },
    ];
    for (const { list, base } of levels) {
      for (const [index, raw] of ((list as unknown[] | undefined) ?? []).entries()) {
        const { node, ref } = resolveRef(spec, raw);
        const parameter = node as { name?: string; in?: string; style?: string; schema?: unknown };
        const styles = STYLES[String(parameter.in)];
        if (!styles || (parameter.in === 'querystring' && !isOpenApi32(spec)))
          errors.push(
            `${at(op)}: parameter ${index} (${parameter.name}) is in "${parameter.in}", which is not a parameter location (path, query, header, cookie${isOpenApi32(spec) ? ', querystring' : ''})`,
          );
        else if (parameter.in === 'querystring' && !querystringReadable(parameter as { content?: Record<string, unknown> })) {
          errors.push(
            `${at(op)}: the querystring parameter ${parameter.name} must give its \`content\` as application/json or application/x-www-form-urlencoded`,
          );
        } else if (parameter.style !== undefined && !styles.includes(parameter.style)) {
          errors.push(
            `${at(op)}: parameter ${parameter.name} has style ${parameter.style}, which ${parameter.in} parameters do not have (${styles.join(', ')})`,
          );
        }
        if (parameter.schema !== undefined) compile(request, `${ref ? ref.slice(1) : `${base}/${index}`}/schema`, `${at(op)}: parameter ${parameter.name}`);
      }
    }
    const body = op.operation['requestBody'];
    if (body !== undefined) {
      const { node, ref } = resolveRef(spec, body);
      const base = ref ? ref.slice(1) : `${op.pointer}/requestBody`;
      for (const [mediaType, media] of Object.entries((node['content'] as Record<string, { schema?: unknown }> | undefined) ?? {})) {
        if (mediaKind(mediaType) === 'xml') {
          warnings.push(
            `${at(op)}: request bodies of ${essence(mediaType)} are not served (XML is not supported): ` +
              "such a request gets 415, the operation's other media types work",
          );
        } else if (media?.schema !== undefined) compile(request, `${base}/content/${escapePointer(mediaType)}/schema`, at(op));
      }
    }
    const xmlResponses: string[] = [];
    for (const [status, raw] of Object.entries((op.operation['responses'] ?? {}) as Record<string, unknown>)) {
      const { node, ref } = resolveRef(spec, raw);
      const base = ref ? ref.slice(1) : `${op.pointer}/responses/${escapePointer(status)}`;
      for (const [mediaType, media] of Object.entries((node['content'] as Record<string, { schema?: unknown }> | undefined) ?? {})) {
        if (mediaKind(mediaType) === 'xml') xmlResponses.push(`${status} ${essence(mediaType)}`);
        else if (media?.schema !== undefined) compile(response, `${base}/content/${escapePointer(mediaType)}/schema`, at(op));
      }
    }
    if (xmlResponses.length > 0) {
      warnings.push(
        `${at(op)}: responses in XML are not served (${xmlResponses.join(', ')}; XML is not supported): ` +
          'Accept picks among the others, 406 when only XML is acceptable',
      );
    }
    events += Object.keys((op.operation['callbacks'] ?? {}) as object).length;
  }
  const defaultMappings = countKey(spec.components?.['schemas'], 'defaultMapping', true);
  if (defaultMappings > 0) {
    warnings.push(
      `${options.label}: ${defaultMappings} discriminator defaultMapping(s) (3.2) are not applied: ` +
        'a payload without the discriminating property is validated against the oneOf / anyOf as written',
    );
  }
  if (events > 0) {
    warnings.push(
      `${options.label}: ${events} webhook(s) and callback(s) are events the server sends, not routes: ` +
        'their payload types are generated (generated/<version>/events.ts), but nothing sends them yet',
    );
  }
  return { errors, warnings };
}
