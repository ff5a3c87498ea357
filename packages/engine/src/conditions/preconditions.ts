import type { OpenApiDocument, SpecOperation } from '../contract/document';
import { declaredParameters } from '../request/declared-parameters';
import { resolveRef } from '../contract/refs';
import { ApiError } from '../errors/api-error';
import { conditionMatches, formatTag, isOpaqueTag, parseTagCondition, strongMatch, weakMatch, type EntityTag, type TagCondition } from './entity-tags';

/** What an operation declares about conditional requests, read once at start. */
export interface ConditionalFacts {
  /** It declares an `If-Match` header parameter. */
  readonly ifMatch: boolean;
  /** It declares an `If-None-Match` header parameter. */
  readonly ifNoneMatch: boolean;
  /** It declares a 428: a write without a condition header is refused. */
  readonly requiresCondition: boolean;
  /** It declares a 304: a read whose `If-None-Match` matches is answered 304. */
  readonly notModified: boolean;
  /** The statuses whose responses declare an `ETag` header: only those send the handler's version. */
  readonly etagStatuses: ReadonlySet<number>;
}

/**
 * The conditional-request facts of an operation, from its parameters and
 * responses; undefined when it declares none of them (nothing to do).
 */
export function conditionalFacts(spec: OpenApiDocument, op: SpecOperation): ConditionalFacts | undefined {
  const headers = new Set(declaredParameters(spec, op).flatMap((parameter) => (parameter.in === 'header' ? [parameter.name.toLowerCase()] : [])));
  const responses = (resolveRef(spec, op.operation['responses']).node ?? {}) as Record<string, unknown>;
  const etagStatuses = new Set(
    Object.entries(responses).flatMap(([status, response]) => {
      const declared = (resolveRef(spec, response).node?.['headers'] ?? {}) as Record<string, unknown>;
      return /^\d{3}$/.test(status) && Object.keys(declared).some((name) => name.toLowerCase() === 'etag') ? [Number(status)] : [];
    }),
  );
  const facts: ConditionalFacts = {
    ifMatch: headers.has('if-match'),
    ifNoneMatch: headers.has('if-none-match'),
    requiresCondition: '428' in responses,
    notModified: '304' in responses,
    etagStatuses,
  };
  return facts.ifMatch || facts.ifNoneMatch || facts.requiresCondition || etagStatuses.size > 0 ? facts : undefined;
}

/**
 * A request's preconditions, as its handler checks them: the handler of a
 * write reads the current version of the resource, calls `check` with it
 * (which throws the engine's 412 when a condition fails), and then writes
 * only if the version is still that one, so that two writers with the same
 * `If-Match` cannot both succeed.
 *
 * @example
 * const pet = await pets.get(params.petId);
 * conditions.check(pet && String(pet.version)); // 412 when If-Match names another version
 */
export interface Preconditions {
  /** Whether the request carries `If-Match` or `If-None-Match` (the ones its operation declares). */
  readonly present: boolean;
  /**
   * Evaluates the request's conditions against the current version of the
   * target (undefined: it does not exist), in RFC 9110's order: `If-Match`
   * by strong comparison, then `If-None-Match` by weak comparison. Throws a
   * 412 ApiError (`precondition_failed`) when one fails.
   */
  check(current: string | undefined): void;
}

/** A request with no condition: every check passes. */
export const NO_PRECONDITIONS: Preconditions = Object.freeze({ present: false, check: () => undefined });

/** The parsed condition headers of one request, and whether its handler has checked them. */
export class RequestConditions implements Preconditions {
  checked = false;

  constructor(
    readonly ifMatch: TagCondition | undefined,
    readonly ifNoneMatch: TagCondition | undefined,
    /** GET or HEAD: a matching If-None-Match is a 304 after the handler answered, never a 412 (RFC 9110 13.1.2). */
    private readonly read = false,
  ) {}

  get present(): boolean {
    return this.ifMatch !== undefined || this.ifNoneMatch !== undefined;
  }

  check(current: string | undefined): void {
    this.checked = true;
    const tag = current === undefined ? undefined : tagOf(current);
    if (this.ifMatch !== undefined && !conditionMatches(this.ifMatch, tag, strongMatch)) {
      throw preconditionFailed(
        tag === undefined ? 'If-Match: the resource does not exist' : `If-Match does not name the current version ${formatTag(tag)}: read it again, then retry`,
        tag,
      );
    }
    if (!this.read && this.ifNoneMatch !== undefined && conditionMatches(this.ifNoneMatch, tag, weakMatch)) {
      throw preconditionFailed(
        this.ifNoneMatch === '*' ? 'If-None-Match: * and the resource exists' : `If-None-Match names the current version ${formatTag(tag!)}`,
        tag,
      );
    }
  }

  /**
   * After a read's handler answered with the version it returns: whether
   * `If-None-Match` matches it (the answer becomes 304 Not Modified).
   * `If-Match` is evaluated first: one that fails is a 412.
   */
  notModified(current: EntityTag): boolean {
    if (!this.checked && this.ifMatch !== undefined && !conditionMatches(this.ifMatch, current, strongMatch)) {
      throw preconditionFailed(`If-Match does not name the current version ${formatTag(current)}`, current);
    }
    return this.ifNoneMatch !== undefined && conditionMatches(this.ifNoneMatch, current, weakMatch);
  }
}

const SAFE_METHODS = new Set(['get', 'head', 'options', 'trace', 'query']);

/** Whether a method only reads (a write needs its conditions checked before it writes). */
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method.toLowerCase());

/** GET and HEAD: the only methods a matching If-None-Match answers 304 (RFC 9110 13.1.2); others get 412. */
export const isRetrieval = (method: string): boolean => /^(get|head)$/i.test(method);

/**
 * Reads the declared condition headers of a request: a malformed one is a
 * 400; a write to an operation that declares 428 and comes without any of
 * them is a 428 (`precondition_required`), so that no client overwrites what
 * it has not seen.
 */
export function readConditions(facts: ConditionalFacts, method: string, header: (name: string) => string | undefined): RequestConditions {
  const parse = (name: 'If-Match' | 'If-None-Match', declared: boolean): TagCondition | undefined => {
    const raw = declared ? header(name) : undefined;
    if (raw === undefined) return undefined;
    const condition = parseTagCondition(raw);
    if (condition === undefined) {
      throw new ApiError(400, 'invalid_request', `header.${name} must be * or a list of entity tags ("…" or W/"…"), as the ETag header gives them`);
    }
    return condition;
  };
  const conditions = new RequestConditions(parse('If-Match', facts.ifMatch), parse('If-None-Match', facts.ifNoneMatch), isRetrieval(method));
  if (facts.requiresCondition && !conditions.present && !isSafeMethod(method)) {
    const names = [facts.ifMatch && 'If-Match', facts.ifNoneMatch && 'If-None-Match'].filter(Boolean).join(' or ') || 'If-Match';
    throw new ApiError(428, 'precondition_required', `this request must be conditional: send ${names} with the ETag of the version you read`);
  }
  return conditions;
}

/** A handler's version as an entity tag: a full tag (`"…"`, `W/"…"`) as it is, anything else as a strong tag's opaque part. */
export function tagOf(version: string): EntityTag {
  const parsed = /^(W\/)?"(.*)"$/.exec(version);
  const opaque = parsed ? parsed[2]! : version;
  if (!isOpaqueTag(opaque)) throw new Error(`a version given as an entity tag must be visible ASCII without '"': ${JSON.stringify(version)}`);
  return { opaque, weak: parsed?.[1] !== undefined };
}

/** A 412, with the current version's `ETag` so that the client can read again knowingly. */
const preconditionFailed = (message: string, current: EntityTag | undefined): ApiError =>
  new ApiError(412, 'precondition_failed', message, current === undefined ? {} : { ETag: formatTag(current) });
