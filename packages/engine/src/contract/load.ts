import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NormalizedProblem } from '@redocly/openapi-core';
import { isOpenApi32, type OpenApiDocument } from './document';
import { holdsNames, isExtension } from './extensions';
import { lookupRef, resolveRef } from './refs';

/** A document that cannot be served: the message names the file, the reference or schema, and the reason. */
export class ContractLoadError extends Error {
  override readonly name = 'ContractLoadError';
}

type Redocly = typeof import('@redocly/openapi-core');

/** Redocly's configuration with no rules: the bundler only resolves. */
let bundlerConfig: ReturnType<Redocly['createConfig']> | undefined;

/**
 * Reads an OpenAPI 3.0 or 3.1 document and every file its relative `$ref`s
 * reach (`./schemas/order.yaml`, `../common.yaml#/components/...`), and
 * bundles them into one document whose `$ref`s are all local (Redocly's
 * bundler: external schemas become `components`, external path items are
 * inlined). Every tool and the server read the contract through here, so a
 * document split across files is served exactly like a single one.
 *
 * In an OpenAPI 3.2 document, `$self` is the base of its references: a
 * `$ref` to it or to a file in its folder is read here (`selfResolving`).
 *
 * A document that is one file whose `$ref`s all resolve inside it is read as
 * it is, without loading the bundler (a large library the running server
 * would otherwise keep in memory for nothing).
 *
 * Throws a ContractLoadError naming the file and the reason: a file that
 * does not exist or is not valid YAML (or JSON), a reference that resolves nowhere
 * (with the file and pointer where it is written), a document that is not
 * OpenAPI 3.0 or 3.1.
 *
 * @example const contract = await loadContract('openapi/v1/openapi.yaml');
 */
export async function loadContract(file: string): Promise<OpenApiDocument> {
  const shown = shownPath(file);
  const parsed = parsedFile(file, shown);
  const whole = selfContained(parsed);
  if (whole !== undefined) return checkedDocument(whole, shown);
  // Redocly is loaded only here: its errors name the file, the reference and the pointer.
  // require, not import(): the compiled package's native import() fails under test runners that load CommonJS (jest).
  const { bundle, createConfig, BaseResolver } = require('@redocly/openapi-core') as Redocly;
  const self = selfFolder(parsed, file);
  let result: Awaited<ReturnType<Redocly['bundle']>>;
  try {
    bundlerConfig ??= createConfig({});
    result = await bundle({
      ref: path.resolve(file),
      config: await bundlerConfig,
      dereference: false,
      ...(self && { externalRefResolver: new (selfResolving(BaseResolver, self))() }),
    });
  } catch (error) {
    throw new ContractLoadError(`${shown}: ${firstLine((error as Error).message)}`);
  }
  const errors = result.problems.filter((problem) => problem.severity === 'error');
  if (errors.length > 0) throw new ContractLoadError(errors.map(describeProblem).join('\n'));
  if (self) localizeSelfRefs(result.bundle.parsed, `${self.self}#`);
  return checkedDocument(result.bundle.parsed, shown);
}

/** Where an OpenAPI 3.2 document says it lives (`$self`, an absolute URL), and the folder of the file that is it. */
interface SelfFolder {
  readonly self: string;
  readonly url: string;
  readonly file: string;
  readonly folder: string;
}

function selfFolder(parsed: unknown, file: string): SelfFolder | undefined {
  const { openapi, $self } = (parsed ?? {}) as { openapi?: unknown; $self?: unknown };
  if (typeof openapi !== 'string' || !openapi.startsWith('3.2.') || typeof $self !== 'string') return undefined;
  let self: URL;
  try {
    self = new URL($self, pathToFileURL(path.resolve(file)));
  } catch {
    return undefined;
  }
  // A relative `$self` (`/library/openapi.yaml`) names a place on the web, not on this disk: the file's folder stays the base.
  if (self.protocol === 'file:') return undefined;
  self.hash = '';
  return { self: self.href, url: new URL('.', self).href, file: path.resolve(file), folder: path.dirname(path.resolve(file)) };
}

/**
 * OpenAPI 3.2's `$self` is the base its references resolve against. The file
 * read is that document (whatever its name here), so a reference to `$self`
 * itself, or to anything in its folder, is read here: with `$self:
 * https://example.com/library/openapi.yaml`,
 * `https://example.com/library/schemas/book.yaml#/Book` is the file
 * `schemas/book.yaml` beside the document. Any other absolute reference is
 * fetched, as before.
 */
function selfResolving(Base: Redocly['BaseResolver'], self: SelfFolder): Redocly['BaseResolver'] {
  return class extends Base {
    override resolveExternalRef(base: string | null, ref: string): string {
      const absolute = super.resolveExternalRef(base, ref);
      if (absolute === self.self) return self.file;
      return absolute.startsWith(self.url) ? path.join(self.folder, decodeURIComponent(absolute.slice(self.url.length))) : absolute;
    }
  };
}

/** A `$ref` to a place in the document by its `$self` URL made a local one (`#/components/...`), in place; extensions are left as written. */
function localizeSelfRefs(document: unknown, selfPrefix: string): void {
  eachRef(document, (ref, holder) => {
    if (ref.startsWith(selfPrefix)) holder['$ref'] = ref.slice(selfPrefix.length - 1);
    return false; // every one of them
  });
}

/** Checks that a parsed value is a document the engine serves. */
export function checkedDocument(parsed: unknown, shown: string): OpenApiDocument {
  const document = parsed as Partial<OpenApiDocument> | null;
  if (document === null || typeof document !== 'object') throw new ContractLoadError(`${shown}: not an OpenAPI document (it is not a YAML or JSON object)`);
  if (typeof document.openapi !== 'string') {
    const swagger = (document as { swagger?: unknown }).swagger;
    throw new ContractLoadError(
      `${shown}: not an OpenAPI 3 document (` +
        (swagger === undefined ? 'no "openapi" field)' : `Swagger ${String(swagger)}: convert it to OpenAPI 3, e.g. with swagger2openapi)`),
    );
  }
  if (!/^3\.[012]\.\d+$/.test(document.openapi))
    throw new ContractLoadError(`${shown}: OpenAPI ${document.openapi} is not served (3.0.x, 3.1.x and 3.2.x are)`);
  if (typeof document.info?.version !== 'string') throw new ContractLoadError(`${shown}: info.version is missing`);
  if (document.paths !== undefined && (typeof document.paths !== 'object' || document.paths === null))
    throw new ContractLoadError(`${shown}: paths is not an object`);
  const served = { ...document, paths: document.paths ?? {} } as OpenApiDocument;
  return isOpenApi32(served) ? withMediaTypesInlined(served) : served;
}

/**
 * 3.2 lets a `content` entry be a `$ref` to `components.mediaTypes`. Every
 * reader of a media type object (bodies, responses, streams, mocks, the
 * validator's copy) then finds it in place: each such reference is replaced
 * by the object it names (the document says the same thing, once).
 */
function withMediaTypesInlined(spec: OpenApiDocument): OpenApiDocument {
  const visit = (node: unknown, key: string | undefined): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, undefined));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(node)) {
      const inlined = key === 'content' && isMediaTypeRef(value) ? resolveRef(spec, value).node : value;
      out[name] = visit(inlined, name);
    }
    return out;
  };
  return visit(spec, undefined) as OpenApiDocument;
}

const isMediaTypeRef = (value: unknown): boolean =>
  typeof (value as { $ref?: unknown } | null)?.$ref === 'string' && (value as { $ref: string }).$ref.startsWith('#/components/mediaTypes/');

/** `openapi/v3/schemas/order.yaml#/properties/owner: Can't resolve $ref: ENOENT ... './owner.yaml'`. */
function describeProblem(problem: NormalizedProblem): string {
  const where = problem.location[0];
  const file = where?.source.absoluteRef ? shownPath(where.source.absoluteRef) : 'the document';
  const pointer = where?.pointer && where.pointer !== '#/' ? where.pointer : '';
  return `${file}${pointer}: ${problem.message}`;
}

const firstLine = (text: string): string => text.trim().split('\n')[0] ?? text;

/** Relative to the working folder when inside it, as a person finds it. */
function shownPath(file: string): string {
  const relative = path.relative(process.cwd(), path.resolve(file));
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative.split(path.sep).join('/');
}

/**
 * Reads a document that is already one file with only local `$ref`s (a
 * release snapshot, or a document written that way), synchronously; throws
 * when it references another file (read it with `loadContract`).
 *
 * @example const release = readBundledContract('openapi/v1/releases/1.1.0.yaml');
 */
export function readBundledContract(file: string): OpenApiDocument {
  const shown = shownPath(file);
  const parsed = parsedFile(file, shown);
  const external = firstExternalRef(parsed);
  if (external) throw new ContractLoadError(`${shown}: references another file (${external}): load it with loadContract, which bundles`);
  return checkedDocument(parsed, shown);
}

/** A document file read and parsed (YAML, or JSON, which YAML reads); a ContractLoadError naming it otherwise. */
function parsedFile(file: string, shown: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ContractLoadError(`${shown}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return parse(text) as unknown;
  } catch (error) {
    throw new ContractLoadError(`${shown}: not valid YAML: ${firstLine((error as Error).message)}`);
  }
}

/** The parsed document when it is one file whose every `$ref` resolves inside it; undefined otherwise (the bundler reads it). */
function selfContained(parsed: unknown): object | undefined {
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const resolves = (ref: string): boolean => {
    try {
      lookupRef(parsed, ref);
      return true;
    } catch {
      return false;
    }
  };
  return firstRef(parsed, (ref) => !resolves(ref)) === undefined ? parsed : undefined;
}

const firstExternalRef = (node: unknown): string | undefined => firstRef(node, (ref) => !ref.startsWith('#'));

/** The first `$ref` value in a parsed document that `matches`, depth first (extensions skipped, as `eachRef` says). */
function firstRef(node: unknown, matches: (ref: string) => boolean): string | undefined {
  let found: string | undefined;
  eachRef(node, (ref) => {
    if (!matches(ref)) return false;
    found = ref;
    return true;
  });
  return found;
}

/**
 * Calls `visit` with each `$ref` value of a parsed document and the object
 * holding it, depth first, until it returns true (then returns true: found).
 * Extensions are skipped: a `$ref` there is for the tool that reads that
 * extension (see extensions.ts), and the bundler leaves it as it is.
 */
function eachRef(node: unknown, visit: (ref: string, holder: Record<string, unknown>) => boolean, isNameMap = false): boolean {
  if (node === null || typeof node !== 'object') return false;
  const array = Array.isArray(node);
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      if (visit(value, node as Record<string, unknown>)) return true;
    } else if ((array || !isExtension(key, isNameMap)) && eachRef(value, visit, !array && holdsNames(key, isNameMap))) return true;
  }
  return false;
}
