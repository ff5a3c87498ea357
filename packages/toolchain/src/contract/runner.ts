/**
 * Runs the contract fuzzer against a running server: builds the cases of
 * every operation (or those selected), sends them in order (creating
 * operations first, so later cases can use the ids they returned), checks
 * every response, and follows creations and lists with read-backs.
 */
import { isDeepStrictEqual } from 'node:util';
import { casesFor, type Case, type CaseKind } from './cases';
import { checkOutcome, checkResponse, isNotImplemented, parseJson, type CheckFailure } from './checks';
import { toCurl } from './curl';
import { buildRequest, requirementFor, type HttpRequest, type Target } from './request';
import { idsIn, itemOperationOf, sentFieldsDiffer } from './stateful';
import { conditionalFacts, notModified, readsTag, STALE_TAG, unchanged, unconditionalWriteRefused } from './conditional';
import { loadContract, type Contract, type Operation, type Schema } from './spec';
import { baseValue } from './schema-values';
import { rateLimitHint, RunStopped, Transport, type HttpResponse } from './transport';

export interface ContractOptions {
  /** The server's base URL, ending with the base path (e.g. `http://127.0.0.1:3000/v1`). */
  baseUrl: string;
  /** The API key the valid requests carry. */
  key: string;
  /** The contract's file (read when `contract` is not given). */
  specFile: string;
  /** The contract, already loaded (a document split across files, bundled). */
  contract?: Contract;
  /** An access token for operations whose schemes are oauth2 or openIdConnect; without one they are skipped. */
  token?: string;
  /** Makes the run reproducible; random when absent. */
  seed?: number;
  /** Random (property-based) valid requests per operation, besides the edge cases. Default 20. */
  maxExamples?: number;
  /** Only these operationIds. */
  operations?: string[];
  /** At most this many requests per second. Default 20. */
  rate?: number;
  /** Stop after this many seconds. Default 300. */
  timeLimitSeconds?: number;
  /** Per request. Default 10,000. */
  requestTimeoutMs?: number;
  /** Progress lines (one per operation, waits on 429). */
  log?: (line: string) => void;
  /** The project's command for a key with limits a run never meets, named when a run meets them (package.json `specFirst.largerKey`). */
  largerKey?: string;
}

export interface CaseResult {
  operationId: string;
  kind: CaseKind | 'stateful';
  label: string;
  outcome: 'passed' | 'failed' | 'skipped';
  /** The request as sent, the key replaced by `$API_KEY`, a body that is not text described. */
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  curl: string;
  status?: number;
  failures: CheckFailure[];
}

export interface ContractResult {
  seed: number;
  baseUrl: string;
  passed: number;
  failed: number;
  skipped: number;
  /** Cases left when the run stopped early. */
  notRun: number;
  stoppedReason?: string;
  /** Operations that answered 501 not_implemented. */
  notImplemented: string[];
  byOperation: Record<string, { passed: number; failed: number; skipped: number }>;
  requestsSent: number;
  rateLimitedWaits: number;
  durationMs: number;
  cases: CaseResult[];
}

/** Creating operations first, then the other operations without path parameters, then item operations. */
function runOrder(operation: Operation): number {
  const hasPathParameter = operation.parameters.some((p) => p.in === 'path');
  if (hasPathParameter) return 2;
  return operation.method === 'POST' ? 0 : 1;
}

/** Ids the server returned, per collection path (`/pets`), for path parameters of item operations. */
class KnownIds {
  private readonly ids = new Map<string, unknown[]>();

  record(collectionPath: string, body: unknown): void {
    const list = this.ids.get(collectionPath) ?? [];
    for (const id of idsIn(body)) if (!list.some((known) => isDeepStrictEqual(known, id))) list.push(id);
    this.ids.set(collectionPath, list.slice(-200));
  }

  /** A known id for an item path (`/pets/{petId}`), chosen by `index`, or undefined. */
  pick(itemPath: string, index: number): unknown {
    const list = this.ids.get(itemPath.replace(/\/\{[^}/]+\}$/, '')) ?? [];
    return list.length ? list[index % list.length] : undefined;
  }
}

/**
 * Runs every case and returns the results; never throws for what the server
 * does (only for a contract file it cannot read).
 *
 * @example
 * const result = await runContract({ baseUrl: 'http://127.0.0.1:3000/v1', key, specFile: 'openapi/v1/openapi.yaml', seed: 1 });
 * console.log(`${result.passed} passed, ${result.failed} failed`);
 */
export async function runContract(options: ContractOptions): Promise<ContractResult> {
  const started = Date.now();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const log = options.log ?? (() => undefined);
  const contract: Contract = options.contract ?? loadContract(options.specFile);
  const selected = contract.operations.filter((op) => !options.operations?.length || options.operations.includes(op.operationId));
  const unknown = (options.operations ?? []).filter((id) => !contract.operations.some((op) => op.operationId === id));
  if (unknown.length)
    throw new Error(`unknown operationId: ${unknown.join(', ')} (the contract has ${contract.operations.map((op) => op.operationId).join(', ')})`);

  const transport = new Transport({
    rate: options.rate ?? 20,
    deadline: started + (options.timeLimitSeconds ?? 300) * 1000,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    hint: rateLimitHint(options.largerKey),
    onRateLimited: (_response, seconds) => {
      log(`429 rate limited: waiting ${seconds} s (Retry-After), then sending again`);
      if (transport.rateLimitedWaits === 0 && options.largerKey !== undefined)
        log(`  (the key's limits are small for this run; no waits with \`${options.largerKey}\`)`);
    },
  });
  const target: Target = { baseUrl: options.baseUrl, key: options.key, ...(options.token !== undefined && { token: options.token }) };
  const known = new KnownIds();
  const results: CaseResult[] = [];
  const notImplemented = new Set<string>();
  const plan = [...selected]
    .sort((a, b) => runOrder(a) - runOrder(b))
    .map((operation, index) => ({
      operation,
      cases: casesFor(operation, { seed: seed + index, maxExamples: options.maxExamples ?? 20, siblings: contract.operations }),
    }));
  // A body property named as an item path's parameter (`petId` of `/pets/{petId}`) refers to that resource: half of the positive cases send a known id.
  const references = new Map(
    contract.operations.flatMap((operation) => {
      const path = operation.parameters.filter((p) => p.in === 'path');
      return operation.method === 'GET' && path.length === 1 && /\/\{[^}/]+\}$/.test(operation.path) ? [[path[0]!.name, operation.path] as const] : [];
    }),
  );
  let notRun = plan.reduce((sum, entry) => sum + entry.cases.length, 0);
  let stoppedReason: string | undefined;
  let answered = false;

  /** Sends one request, checks the response, records the result. */
  const exchange = async (
    operation: Operation,
    kind: CaseResult['kind'],
    label: string,
    request: HttpRequest,
    judge: (response: HttpResponse) => CheckFailure[],
  ): Promise<HttpResponse | undefined> => {
    const record = (outcome: CaseResult['outcome'], failures: CheckFailure[], status?: number, what = label): void => {
      results.push({
        operationId: operation.operationId,
        kind,
        label: what,
        outcome,
        request: redact(request, options.key),
        curl: toCurl(request, options.key),
        failures,
        ...(status !== undefined && { status }),
      });
    };
    // A 429 is waited out, not a failure, but it must still be what the contract declares (Retry-After...).
    const answer = await transport.send(request, (refused) => {
      const failures = checkResponse(contract, operation, refused);
      if (failures.length) record('failed', failures, refused.status, `${label} (its 429 response)`);
    });
    if ('error' in answer) {
      record('failed', [{ check: 'not_a_server_error', expected: 'a response', got: answer.error }]);
      // Nothing answered yet: a wrong --base-url or a server that is down, not 200 failures to print.
      if (!answered) throw new RunStopped(`cannot reach ${options.baseUrl} (${answer.error})`);
      return undefined;
    }
    answered = true;
    const failures = [...checkResponse(contract, operation, answer), ...judge(answer)];
    if (failures.length === 0 && isNotImplemented(answer)) {
      notImplemented.add(operation.operationId);
      record('skipped', [], answer.status);
      return undefined;
    }
    record(failures.length ? 'failed' : 'passed', failures, answer.status);
    return answer;
  };

  try {
    for (const { operation, cases } of plan) {
      let runnable = cases;
      if (operation.secured && !requirementFor(operation, target)) {
        // Only token schemes, and no --token: nothing can be sent that may pass, but a request without credentials must still be refused.
        runnable = cases.filter((test) => test.kind === 'auth' && test.input.auth === 'missing');
        notRun -= cases.length - runnable.length;
        log(`${operation.operationId}: only its missing-credentials case (its security needs an access token: pass --token)`);
        results.push({
          operationId: operation.operationId,
          kind: 'positive',
          label: 'needs an access token (--token)',
          outcome: 'skipped',
          request: { method: operation.method, url: '', headers: {} },
          curl: '',
          failures: [],
        });
      } else {
        log(`${operation.operationId}: ${cases.length} cases`);
        await findIdsFor(operation);
      }
      const item = itemOperationOf(contract.operations, operation);
      for (const [index, test] of runnable.entries()) {
        notRun--;
        if (test.kind === 'positive' && notImplemented.has(operation.operationId)) {
          results.push({
            operationId: operation.operationId,
            kind: test.kind,
            label: test.label,
            outcome: 'skipped',
            request: { method: operation.method, url: '', headers: {} },
            curl: '',
            failures: [],
          });
          continue;
        }
        const sent = withReferences(test, index);
        const { request, resourceMayBeMissing } = requestFor(sent, index, known, target);
        // A positive write under If-Match carries the current tag of its target, read just before (when the contract says where).
        const tagUnknown = test.kind === 'positive' && conditionalFacts(operation).ifMatch && !(await withCurrentTag(operation, request));
        const namesResource = operation.parameters.some((p) => p.in === 'path') || namesReference(sent.input.body);
        const response = await exchange(operation, test.kind, test.label, request, (answer) =>
          checkOutcome(sent, answer, resourceMayBeMissing, { tagUnknown, namesResource }),
        );
        // A mock's example (npm run mock) is not stored data: nothing to read back.
        if (!response || test.kind !== 'positive' || response.status >= 300 || response.headers['x-mock'] !== undefined) continue;
        const body = parseJson(response);
        if (!operation.parameters.some((p) => p.in === 'path')) known.record(operation.path, body);
        if (item) await readBack(operation, item, sent, body, index);
      }
      if (runnable.length === cases.length) await checkConditions(operation, cases);
    }
  } catch (error) {
    if (!(error instanceof RunStopped)) throw error;
    stoppedReason = error.message;
  }

  /** Whether a body names a resource by a property named as an item path's parameter (`petId`). */
  function namesReference(body: unknown): boolean {
    return body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).some((name) => references.has(name));
  }

  /** A positive case whose body names a resource by a known id, every other case (the rest keep their generated values). */
  function withReferences(test: Case, index: number): Case {
    const body = test.input.body;
    if (test.kind !== 'positive' || index % 2 === 1 || body === null || typeof body !== 'object' || Array.isArray(body)) return test;
    const named = Object.keys(body).flatMap((name) => {
      const itemPath = references.get(name);
      const id = itemPath === undefined ? undefined : known.pick(itemPath, index);
      return id === undefined ? [] : [[name, id] as const];
    });
    return named.length === 0 ? test : { ...test, input: { ...test.input, body: { ...body, ...Object.fromEntries(named) } } };
  }

  /** The item read of a write's target (same path, GET) that declares its ETag, when there is one. */
  function tagReaderOf(operation: Operation): Operation | undefined {
    return contract.operations.find((candidate) => candidate.method === 'GET' && candidate.path === operation.path && readsTag(candidate));
  }

  /** The current ETag of the resource at `url`, read with the item operation; undefined when it cannot be read. */
  async function currentTag(reader: Operation, url: string, label: string): Promise<string | undefined> {
    const request = { ...buildRequest(reader, { params: {}, auth: 'valid' }, target), url };
    const response = await exchange(reader, 'stateful', label, request, () => []);
    return response?.status === 200 ? response.headers['etag'] : undefined;
  }

  /** Sets `If-Match` to the current tag of the request's target; false when none could be read. */
  async function withCurrentTag(operation: Operation, request: HttpRequest): Promise<boolean> {
    const reader = tagReaderOf(operation);
    const tag = reader && (await currentTag(reader, request.url, `read the current ETag for ${operation.operationId}`));
    if (tag === undefined) return false;
    request.headers['if-match'] = tag;
    return true;
  }

  /**
   * conditional_requests, once per operation that declares conditions, on a
   * known resource: a write without If-Match (428 declared) or with a stale
   * tag is refused and changes nothing; a read naming the current tag in
   * If-None-Match (304 declared) is a 304 with no body, for its weak form too.
   */
  async function checkConditions(operation: Operation, cases: Case[]): Promise<void> {
    const facts = conditionalFacts(operation);
    const id = known.pick(operation.path, 0);
    const pathParameter = operation.parameters.filter((p) => p.in === 'path');
    if (id === undefined || pathParameter.length !== 1) return;
    const params = { [pathParameter[0]!.name]: id };
    const reader = operation.method === 'GET' ? (readsTag(operation) ? operation : undefined) : tagReaderOf(operation);
    if (!reader) return;
    const url = buildRequest(reader, { params, auth: 'valid' }, target).url;
    if (operation.method === 'GET') {
      if (!facts.ifNoneMatch || !facts.notModified) return;
      const tag = await currentTag(reader, url, `read the current ETag of ${operation.operationId} ${JSON.stringify(id)}`);
      if (tag === undefined) return;
      for (const sent of [tag, `W/${tag.replace(/^W\//, '')}`]) {
        const request = { ...buildRequest(operation, { params, auth: 'valid' }, target), url };
        request.headers['if-none-match'] = sent;
        await exchange(operation, 'stateful', `If-None-Match: ${sent} (the current tag): 304`, request, (answer) => notModified(tag, answer));
      }
      return;
    }
    if (!facts.ifMatch) return;
    const positive = cases.find((test) => test.kind === 'positive');
    if (!positive) return;
    const attempts: Array<[412 | 428, string | undefined]> = [[412, STALE_TAG]];
    if (facts.requiresCondition) attempts.unshift([428, undefined]);
    for (const [expected, sent] of attempts) {
      const before = await currentTag(reader, url, `read the current ETag of ${operation.operationId} ${JSON.stringify(id)}`);
      if (before === undefined) return;
      const request = buildRequest(operation, { ...positive.input, params: { ...positive.input.params, ...params } }, target);
      delete request.headers['if-match'];
      if (sent !== undefined) request.headers['if-match'] = sent;
      const label = sent === undefined ? 'without If-Match: 428, nothing changed' : `If-Match: ${sent} (stale): 412, nothing changed`;
      const answer = await exchange(operation, 'stateful', label, request, (response) => unconditionalWriteRefused(expected, response));
      if (!answer) return;
      const after = { ...buildRequest(reader, { params, auth: 'valid' }, target), url };
      await exchange(reader, 'stateful', `${operation.operationId} ${label}: the ETag is unchanged`, after, (response) => unchanged(before, response));
    }
  }

  /**
   * An item operation run without its collection's (e.g. `--operation getPet`)
   * would only meet ids that do not exist: list the collection once to find real ones.
   */
  async function findIdsFor(operation: Operation): Promise<void> {
    const pathParameters = operation.parameters.filter((p) => p.in === 'path');
    if (pathParameters.length !== 1 || known.pick(operation.path, 0) !== undefined) return;
    const collection = contract.operations.find(
      (candidate) => candidate.method === 'GET' && itemOperationOf([operation], candidate) && !candidate.parameters.some((p) => p.required),
    );
    if (!collection) return;
    const request = buildRequest(collection, { params: {}, auth: 'valid' }, target);
    const response = await exchange(collection, 'stateful', `list to find ids for ${operation.operationId}`, request, () => []);
    if (response && response.status < 300) known.record(collection.path, parseJson(response));
  }

  /** ensure_resource_availability: the created (or one listed) resource, read back by its id. */
  async function readBack(operation: Operation, item: Operation, test: Case, body: unknown, index: number): Promise<void> {
    const ids = idsIn(body);
    if (ids.length === 0) return;
    const id = ids[index % ids.length];
    const expected = Array.isArray(body) ? body[index % ids.length] : body;
    const pathParameter = item.parameters.find((p) => p.in === 'path')!;
    const request = buildRequest(item, { params: { [pathParameter.name]: id }, auth: 'valid' }, target);
    const created = operation.method === 'POST';
    const label = `${operation.operationId} -> ${item.operationId} ${JSON.stringify(id)}: ${created ? 'created' : 'listed'} resource readable and equal (after "${test.label}")`;
    await exchange(item, 'stateful', label, request, (answer) => {
      const failures: CheckFailure[] = [];
      const readBody = parseJson(answer);
      if (answer.status !== 200)
        failures.push({
          check: 'ensure_resource_availability',
          expected: `200 with the ${created ? 'created' : 'listed'} resource`,
          got: `${answer.status} ${answer.text.slice(0, 300)}`,
        });
      else if (!isDeepStrictEqual(readBody, expected)) {
        failures.push({ check: 'ensure_resource_availability', expected: JSON.stringify(expected), got: answer.text.slice(0, 300) });
      }
      if (created) {
        for (const difference of sentFieldsDiffer(operation, test.input.body, expected)) {
          failures.push({ check: 'ensure_resource_availability', expected: 'the created resource holds what was sent (or the defaults)', got: difference });
        }
      }
      return failures;
    });
  }

  const byOperation: ContractResult['byOperation'] = {};
  for (const result of results) {
    byOperation[result.operationId] ??= { passed: 0, failed: 0, skipped: 0 };
    const counts = byOperation[result.operationId]!;
    counts[result.outcome]++;
  }
  const count = (outcome: CaseResult['outcome']): number => results.filter((r) => r.outcome === outcome).length;
  return {
    seed,
    baseUrl: options.baseUrl,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    notRun,
    ...(stoppedReason && { stoppedReason }),
    notImplemented: [...notImplemented],
    byOperation,
    requestsSent: transport.sent,
    rateLimitedWaits: transport.rateLimitedWaits,
    durationMs: Date.now() - started,
    cases: results,
  };
}

/** The request of a case, path parameters filled with a known id when the case leaves them open. */
function requestFor(test: Case, index: number, known: KnownIds, target: Target): { request: HttpRequest; resourceMayBeMissing: boolean } {
  const params = { ...test.input.params };
  let resourceMayBeMissing = false;
  for (const parameter of test.operation.parameters.filter((p) => p.in === 'path')) {
    if (parameter.name in params) {
      resourceMayBeMissing = true; // an explicit id (an edge such as 2^53-1) may name nothing
      continue;
    }
    const id = test.usesKnownIds ? known.pick(test.operation.path, index) : undefined;
    if (id !== undefined) params[parameter.name] = id;
    else {
      params[parameter.name] = madeUpPathValue(parameter.schema);
      resourceMayBeMissing = true;
    }
  }
  return { request: buildRequest(test.operation, { ...test.input, params }, target), resourceMayBeMissing };
}

/** A value for a path parameter no known id fills: an example, else the lower bound, one item, or every property (a path segment is never empty). */
function madeUpPathValue(schema: Schema): unknown {
  if (schema.examples?.length) return schema.examples[0];
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'array' || schema.items) return [baseValue(schema.items ?? {})];
  if (type === 'object' || schema.properties)
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, property]) => [name, baseValue(property)]));
  return baseValue(schema);
}

/** The request as recorded in reports: the key under test replaced by `$API_KEY`. */
function redact(request: HttpRequest, key: string): CaseResult['request'] {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, value.replace(key, '$API_KEY')]));
  const body =
    typeof request.body === 'string'
      ? request.body
      : request.body === undefined
        ? undefined
        : request.body instanceof FormData
          ? '(multipart form data)'
          : `(${request.body.byteLength} bytes)`;
  return { method: request.method, url: request.url.replaceAll(key, '$API_KEY'), headers, ...(body !== undefined && { body }) };
}
