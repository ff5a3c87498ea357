import path from 'node:path';
import express, { type Express, type Request, type RequestHandler } from 'express';
import helmet from 'helmet';
import { deref } from './contract/refs';
import type { OpenApiDocument, SpecOperation } from './contract/document';
import { loadContract } from './contract/load';
import { responseConformance, type Violation } from './contract/response-conformance';
import { schemaValidator, type SchemaValidator } from './contract/schemas';
import { servedApi, type ServedApi } from './contract/served-api';
import { contextOf, RequestContext, type Principal } from './context/request-context';
import { writeRecordedHeaders } from './context/response-headers';
import { stubbedOperations } from './handlers/stub';
import { buildOperationMocks, type OperationMock } from './mock/mock-responses';
import { buildStatefulMocks, type StatefulOperation } from './mock/stateful-mock';
import { listOperations } from './contract/document';
import { errorMapper, unknownRoute, type EngineLogger } from './pipeline/error-response';
import { conditionalFacts, readConditions, type ConditionalFacts } from './conditions/preconditions';
import { declaresProblems } from './errors/problem-details';
import { loggedPath } from './pipeline/logged-path';
import { assemblePipeline, routeOf } from './pipeline/operation-pipeline';
import { operationResolver } from './pipeline/operation-names';
import type { PhaseImplementations } from './pipeline/phases';
import { contractRefusals } from './pipeline/refusals';
import { assignRequestId } from './pipeline/request-id';
import { handleStage, serializeStage, type StreamSettings } from './pipeline/respond';
import { responseSampler } from './pipeline/response-sampling';
import { precomputeHeaders } from './pipeline/security-headers';
import { streamAdmission } from './pipeline/stream-admission';
import { sunsetStage } from './pipeline/sunset';
import { mountDocs } from './publish/docs';
import { bodyStage } from './request/body';
import { parametersStage } from './request/parameters';
import { limitUrlLength } from './request/url-length';
import { requestValidation } from './request/validator';
import { negotiation, representations } from './response/representations';
import { authenticate, requireCaller, type CredentialCheck } from './security/authenticate';
import { resolvedSecurity } from './security/requirements';
import { servedSchemes } from './security/schemes';
import { tokenVerifier, type TokenSettings } from './security/tokens';
import { asMiddleware, type Stage } from './stage/stage';
import { ApiError } from './errors/api-error';

/**
 * One document to serve, with the handlers of its operations.
 *
 * @example const v1: EngineDocument = { name: 'v1', document: 'openapi/v1/openapi.yaml', handlers, context: { notes } };
 */
export interface EngineDocument {
  /** Served under `/<name>` (`v1`), whatever the document's `servers` say; also its label in logs and metrics. */
  readonly name: string;
  /** The document itself, or the path of its file (YAML or JSON; split files are bundled). */
  readonly document: OpenApiDocument | string;
  /** One entry per operation, by operationId: a handler, or `notImplementedHandler(operationId)`. */
  readonly handlers: Readonly<Record<string, unknown>>;
  /** What every handler receives besides its request, as its second argument (the caller is added per request). */
  readonly context?: object;
  /** Where the document was read from, as messages name it; the file when `document` is one, else `the document <name>`. */
  readonly source?: string;
}

/**
 * How access tokens (oauth2, openIdConnect) are verified; without `jwksUrl`
 * (or a 3.2 `oauth2MetadataUrl` and an `audience`) token requirements answer
 * 401 saying why. With `jwksUrl`, `issuer` and `audience` are required:
 * else a token the same provider issued for another API would pass.
 */
export type TokenOptions = Partial<Omit<TokenSettings, 'keys'>> & {
  readonly jwksUrl?: string | undefined;
  /** Accept tokens of any issuer for any audience (tests against a local key set only). */
  readonly acceptAnyIssuerAndAudience?: boolean;
};

/** The limits of streamed request bodies and answers (sequential media types). */
export interface StreamOptions {
  /** The most bytes of one streamed request body (413 past it). */
  readonly maxRequestBytes: number;
  /** The most items of one streamed request body, unless its schema says `maxItems` (413 past it). */
  readonly maxRequestItems: number;
  /** SSE: the idle time after which a heartbeat comment keeps a stream open. */
  readonly heartbeatMs: number;
  /** The longest a reader may leave a full socket unread before its stream is cut. */
  readonly stallMs: number;
  /** The longest a streamed answer may last. */
  readonly maxDurationMs: number;
  /** Streams one caller may have open at once (429 past it). */
  readonly perCaller: number;
  /** Streams this process serves at once (429 past it). */
  readonly perProcess: number;
  /** The items sent or received that weigh as one more request (`hooks.charge`). */
  readonly itemsPerRequest: number;
}

/** What the engine tells its user as requests run: each one optional. */
export interface EngineHooks {
  /** A deprecated operation was called (its sunset not reached yet). */
  deprecatedCall?(req: Request, operation: string, version: string): void;
  /** A stream was refused by a cap (`caller` or `process`). */
  streamRefused?(req: Request, scope: 'caller' | 'process'): void;
  /** A stream's items weigh as one more request of its caller (every `streams.itemsPerRequest` items). */
  charge?(req: Request): void;
  /** An item of a streamed answer breaks its schema (checked in strict mode and for sampled requests). */
  invalidItem?(req: Request, index: number, problem: string): void;
  /** A streamed answer was cut: its reader stalled, or it lasted too long. */
  streamCut?(req: Request, reason: 'stalled' | 'max_duration'): void;
  /** A sampled response (`responseSampleRate`) breaks the contract. */
  violation?(req: Request, violation: Violation & { operation: string; version: string; status: number; path: string }): void;
}

/**
 * What `createEngine` builds from. Only `documents` is required: every other
 * phase has a default derived from the documents alone.
 *
 * @example const options: EngineOptions<Member> = { documents: [v1], credentials: { key: (key) => members.byKey(key) }, mock: process.env.MOCK === 'true' };
 */
export interface EngineOptions<Caller extends Principal = Principal> {
  readonly documents: readonly EngineDocument[];
  /** Who an API key (apiKey, http bearer, http basic) or a verified token is; by default every key is refused (401) and a token's subject is its caller. */
  readonly credentials?: Partial<CredentialCheck<Caller>>;
  readonly tokens?: TokenOptions;
  /** The realm of authentication challenges; the first document's title by default. */
  readonly realm?: string;
  /** Runs first, for every request (the request id is set): metrics, access logs. */
  readonly observe?: Stage;
  /** Runs once the caller is known, before the request is refused or read: 429 and rate-limit headers. None by default. */
  readonly rateLimit?: Stage;
  /** Who a stream counts against: by default its caller's principal, else its client's address. */
  readonly streamClient?: (req: Request) => string;
  readonly streams?: Partial<StreamOptions>;
  /** Checks every response against the contract before it is sent (a 500 for a violation). */
  readonly validateResponses?: boolean;
  /** The share of responses (0 to 1) checked against the contract after they are sent, reported to `hooks.violation`. */
  readonly responseSampleRate?: number;
  /**
   * Mock mode. `true` or `'examples'`: stubbed operations answer their
   * document's examples instead of 501 (`Prefer: code=404, example=name`
   * picks another). `'stateful'`: every operation is answered by the mock,
   * handlers or not, and what clients create is kept in memory for the life
   * of the process: a POST on a collection path (`/notes`) stores an item a
   * GET, PATCH, PUT or DELETE on its item path (`/notes/{noteId}`) then
   * finds; operations that are not such a pair answer their examples.
   * Authentication, rate limits and validation run as ever.
   *
   * @example await createEngine({ documents, credentials, mock: 'stateful' }) // POST /v1/notes then GET /v1/notes/1 finds it
   */
  readonly mock?: boolean | 'examples' | 'stateful';
  /** GET routes outside the documents (`/readyz`, `/metrics`), beside `/healthz`, `/openapi*` and `/docs`. */
  readonly routes?: Readonly<Record<string, RequestHandler>>;
  readonly hooks?: EngineHooks;
  /** Where failures are logged (a pino logger fits); `console` by default. */
  readonly logger?: EngineLogger;
  /** The clock (ms since epoch) of sunsets and of the logs' once-per-interval limits. */
  readonly now?: () => number;
  /** Draws in [0, 1) for `responseSampleRate`. */
  readonly random?: () => number;
}

/**
 * A running engine: the Express app that serves the documents, and what was decided at start.
 *
 * @example const engine: Engine = await createEngine(options); for (const { message } of engine.warnings) console.warn(message); engine.app.listen(3000);
 */
export interface Engine {
  /** Serves every document under its base path, `/healthz`, `/openapi.json`, `/openapi/<name>.{json,yaml}` and `/docs`; every failure an Error object. */
  readonly app: Express;
  /** The served documents, in order, with their base paths (`/v1`). */
  readonly documents: ReadonlyArray<{ readonly name: string; readonly basePath: string; readonly document: OpenApiDocument }>;
  /** Every operation served, by document. */
  readonly operations: ReadonlyArray<{ readonly name: string; readonly operationId: string }>;
  /** Operations still answered by a stub (501, or their examples with `mock`). */
  readonly stubbed: readonly string[];
  /** What is not served as a document asks (the rest is), for the log: a refused part (`refused`), or a mock example its schema refuses (`invalid example`). */
  readonly warnings: ReadonlyArray<{ readonly document: string; readonly kind: 'refused' | 'invalid example'; readonly message: string }>;
  /** Ends open streams of Server-Sent Events at once (their clients reconnect elsewhere): call it first when stopping. */
  beginShutdown(): void;
}

const STREAM_DEFAULTS: StreamOptions = {
  maxRequestBytes: 100 * 1024 * 1024,
  maxRequestItems: 10_000,
  heartbeatMs: 15_000,
  stallMs: 30_000,
  maxDurationMs: 300_000,
  perCaller: 2,
  perProcess: 16,
  itemsPerRequest: 1_000,
};

/**
 * Serves OpenAPI documents: every phase of a request (routing, security,
 * rate limits, parameters, bodies, validation, negotiation, streams, the
 * handler, the answer) derived from the documents, with the user's handlers
 * and credential checks plugged in. Refuses at start, by name, what it
 * cannot serve.
 *
 * @example
 * const engine = await createEngine({
 *   documents: [{ name: 'v1', document: 'openapi/v1/openapi.yaml', handlers }],
 *   credentials: { key: (key) => (key === process.env.API_KEY ? { principal: 'me' } : undefined) },
 * });
 * engine.app.listen(3000);
 */
export async function createEngine<Caller extends Principal = Principal>(options: EngineOptions<Caller>): Promise<Engine> {
  if (options.documents.length === 0) throw new Error('createEngine: no document to serve');
  const documents = await Promise.all(
    options.documents.map(async (entry) => ({
      ...entry,
      document: typeof entry.document === 'string' ? await loadContract(entry.document) : entry.document,
    })),
  );
  const apis = documents.map((entry) => servedApi(entry.name, entry.document));
  const keys = tokenKeysOf(apis, options.tokens);
  const { tokens = {} } = options;
  if (tokens.jwksUrl !== undefined && !tokens.acceptAnyIssuerAndAudience && (tokens.issuer === undefined || tokens.audience === undefined))
    throw new Error(
      'createEngine: tokens.jwksUrl verifies access tokens, so tokens.issuer and tokens.audience must both be set (the iss and aud this API accepts)',
    );
  const sources = options.documents.map(
    (entry) => entry.source ?? (typeof entry.document === 'string' ? path.relative(process.cwd(), path.resolve(entry.document)) : `the document ${entry.name}`),
  );
  const warnings: Array<Engine['warnings'][number]> = refuseWhatCannotBeServed(apis, sources, keys !== undefined);
  const now = options.now ?? Date.now;
  const logger = options.logger ?? console;
  const hooks = options.hooks ?? {};
  const streams = { ...STREAM_DEFAULTS, ...options.streams };
  const mocks = options.mock ? new Map(documents.map((entry) => [entry.name, documentMocks(entry, options.mock === 'stateful', warnings)])) : undefined;
  const problemApis = problemDocuments(apis);

  const shutdown = new AbortController();
  const operationOf = operationResolver(apis, Object.keys(options.routes ?? {}));
  const phases = requestPhases({ options, documents, apis, mocks, problemApis, keys, streams, hooks, logger, now, operationOf, shutdown: shutdown.signal });

  const app = express();
  app.disable('x-powered-by');
  // API responses are small and personal: a per-response hash (ETag) costs CPU on every request and no client revalidates them.
  app.set('etag', false);
  // Each response's head is written from the headers its phases recorded in its context, in one writeHead.
  writeRecordedHeaders(app.response);
  app.use(assemblePipeline(apis, phases));
  // Outside every base path: named once here, for the observer's metrics and logs.
  app.use((req, _res, next) => {
    operationOf(req);
    next();
  });
  app.use(asMiddleware(limitUrlLength()));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  for (const [path, handler] of Object.entries(options.routes ?? {})) app.get(path, handler);
  // The documents and /docs count in the rate limit's window of a request without a key.
  mountDocs(app, apis, options.rateLimit && asMiddleware(options.rateLimit));
  app.use(unknownRoute);
  app.use(
    errorMapper(logger, operationOf, now, (req) => {
      const version = contextOf(req).apiVersion;
      return version !== undefined && problemApis.has(version);
    }),
  );

  return Object.freeze({
    app,
    documents: apis.map((api) => Object.freeze({ name: api.name, basePath: api.basePath, document: api.contract })),
    operations: apis.flatMap((api) =>
      api.table.paths.flatMap((path) => [...path.operations.values()].map((op) => ({ name: api.name, operationId: op.operationId }))),
    ),
    stubbed: [...new Set(documents.flatMap((entry) => stubbedOperations(entry.handlers)))],
    warnings,
    beginShutdown: () => shutdown.abort(),
  });
}

/** What the phases are built from. */
interface PhaseParts<Caller extends Principal> {
  options: EngineOptions<Caller>;
  documents: ReadonlyArray<EngineDocument & { document: OpenApiDocument }>;
  apis: readonly ServedApi[];
  mocks: ReadonlyMap<string, DocumentMocks> | undefined;
  /** The served versions whose documents declare problem details. */
  problemApis: ReadonlySet<string>;
  keys: TokenSettings['keys'] | undefined;
  streams: StreamOptions;
  hooks: EngineHooks;
  logger: EngineLogger;
  now: () => number;
  operationOf: (req: Request) => string;
  shutdown: AbortSignal;
}

/** Every phase of pipeline/phases.ts: the engine's stages, the user's parts plugged in where they go. */
function requestPhases<Caller extends Principal>(parts: PhaseParts<Caller>): PhaseImplementations {
  const { options, documents, apis, mocks, problemApis, keys, streams, hooks, logger, now, operationOf, shutdown } = parts;
  const { acceptAnyIssuerAndAudience: _any, jwksUrl: _url, ...claims } = options.tokens ?? {};
  const verifyToken = keys ? tokenVerifier({ ...claims, keys }) : undefined;
  const check: CredentialCheck = {
    key:
      (options.credentials?.key as CredentialCheck['key'] | undefined) ??
      (() => {
        throw new ApiError(401, 'unauthorized', 'this server accepts no API key yet: it has no credential check');
      }),
    token: (options.credentials?.token as CredentialCheck['token'] | undefined) ?? ((token) => ({ principal: `token:${token.subject}` })),
  };
  const realm = options.realm ?? apis[0]!.contract.info.title;
  const sample =
    options.responseSampleRate !== undefined && options.responseSampleRate > 0
      ? responseSampler({
          rate: options.responseSampleRate,
          check: responseViolations(apis, operationOf, hooks),
          logger,
          ...(options.random && { random: options.random }),
        })
      : undefined;
  const observe = options.observe;

  const byName = new Map(documents.map((entry) => [entry.name, entry]));
  const requestSchemas = new Map(apis.map((api) => [api.name, schemaValidator(api.contract, { direction: 'request' })]));
  const validations = new Map(
    apis.map((api) => [api.name, requestValidation(api.contract, api.basePath, { validateResponses: options.validateResponses === true })]),
  );
  const streamSettings = new Map(apis.map((api) => [api.name, streamSettingsOf(api, streams, hooks, shutdown)]));
  const queryKeys = new Map(apis.map((api) => [api.name, apiKeyQueryNames(api.contract)]));
  // Read by two phases (preconditions, serialize): once per operation.
  const facts = new Map<SpecOperation, ConditionalFacts | undefined>();
  const conditionsOf = (op: SpecOperation, api: ServedApi): ConditionalFacts | undefined => {
    if (!facts.has(op)) facts.set(op, conditionalFacts(api.contract, op));
    return facts.get(op);
  };
  const clientOf = options.streamClient ?? ((req: Request) => contextOf(req).caller?.principal ?? req.ip ?? 'unknown');

  return {
    observe: (req, res) => {
      req.context = new RequestContext();
      assignRequestId(req, res);
      if (observe) void observe(req, res);
      sample?.(req, res);
    },
    'security-headers': precomputeHeaders(helmet()),
    route: routeOf(apis.map((api) => api.table)),
    authenticate: (op, api) => authenticate({ ...resolvedSecurity(api.contract, op), check, verifyToken, realm }),
    'rate-limit': options.rateLimit ?? (() => undefined),
    'url-length': limitUrlLength(),
    'require-caller': requireCaller,
    sunset: (op, api) => op && sunsetStage(op, { now, deprecatedCall: (operation, req) => hooks.deprecatedCall?.(req, operation, api.name) }),
    parameters: (op, api) =>
      op &&
      parametersStage(api.contract, op, {
        validator: requestSchemas.get(api.name)!,
        check: validations.get(api.name)!.parameters(op),
        apiKeyQueryNames: queryKeys.get(api.name)!,
      }),
    body: (op, api) =>
      op &&
      bodyStage(api.contract, op, { schemas: requestSchemas.get(api.name)!, maxStreamBytes: streams.maxRequestBytes, maxStreamItems: streams.maxRequestItems }),
    validate: (op, api) => op && validations.get(api.name)!.body(op),
    negotiate: (op, api) => op && negotiation(representations(api.contract, op)),
    preconditions: (op, api) => {
      const declared = op && conditionsOf(op, api);
      if (!declared) return undefined;
      return (req) => {
        contextOf(req).conditions = readConditions(declared, req.method, (name) => req.get(name));
      };
    },
    'stream-admission': streamAdmission({
      limits: streams,
      clientOf,
      charge: (req) => hooks.charge?.(req),
      refused: (req, scope) => hooks.streamRefused?.(req, scope),
    }),
    handle: (op, api) => {
      if (!op) return undefined;
      const entry = byName.get(api.name)!;
      const versionMocks = mocks?.get(api.name);
      return handleStage(op, entry.handlers[op.operationId], {
        context: entry.context ?? {},
        ...(versionMocks && { mocks: versionMocks.examples }),
        ...(versionMocks?.stateful && { stateful: versionMocks.stateful }),
        streams: representations(api.contract, op).streams,
      });
    },
    serialize: (op, api) =>
      op &&
      serializeStage(representations(api.contract, op), {
        validateResponses: options.validateResponses === true,
        streams: streamSettings.get(api.name)!,
        conditional: conditionsOf(op, api),
        problems: problemApis.has(api.name),
      }),
  };
}

/** The served versions whose documents declare problem details: their error answers are negotiated. */
const problemDocuments = (apis: readonly ServedApi[]): ReadonlySet<string> =>
  new Set(apis.filter((api) => declaresProblems(api.contract)).map((api) => api.name));

/** The mock of one document: the examples, and in stateful mode the paired operations and their store. */
interface DocumentMocks {
  examples: Map<string, OperationMock>;
  stateful: Map<string, StatefulOperation> | undefined;
}

/** Example mode mocks the stubs; stateful mode answers every operation, so every one gets its examples and the pairs their store. */
function documentMocks(entry: EngineDocument & { document: OpenApiDocument }, stateful: boolean, warnings: Array<Engine['warnings'][number]>): DocumentMocks {
  const mocked = stateful ? listOperations(entry.document).map((op) => op.operationId) : stubbedOperations(entry.handlers);
  const examples = buildOperationMocks(entry.document, mocked, {
    warn: (message) => warnings.push({ document: entry.name, kind: 'invalid example', message }),
  });
  return { examples, stateful: stateful ? buildStatefulMocks(entry.document, examples) : undefined };
}

/** What the streams of one document share: its response schemas (compiled on first use), the limits, and where an invalid item or a cut is reported. */
function streamSettingsOf(api: ServedApi, streams: StreamOptions, hooks: EngineHooks, shutdown: AbortSignal): StreamSettings {
  let schemas: SchemaValidator | undefined;
  return {
    get schemas() {
      schemas ??= schemaValidator(api.contract, { direction: 'response', allErrors: true });
      return schemas;
    },
    heartbeatMs: streams.heartbeatMs,
    stallMs: streams.stallMs,
    maxDurationMs: streams.maxDurationMs,
    shutdown,
    invalidItem: (req, index, problem) => hooks.invalidItem?.(req, index, problem),
    cut: (req, reason) => hooks.streamCut?.(req, reason),
  };
}

/**
 * Judges a sampled response already sent by the contract's rule, and tells
 * `hooks.violation` what breaks it. A request under a base path that matched
 * no operation is judged as one whose errors must be Error objects
 * (`unmatched`); one outside every base path is not judged.
 */
function responseViolations(apis: readonly ServedApi[], operationOf: (req: Request) => string, hooks: EngineHooks) {
  const served = new Map(apis.map((api) => [api.name, { table: api.table, check: responseConformance(api.contract) }]));
  return (req: Request, response: Parameters<ReturnType<typeof responseConformance>>[1]): void => {
    operationOf(req);
    const version = contextOf(req).apiVersion;
    const api = version === undefined ? undefined : served.get(version);
    if (!api || !hooks.violation) return;
    const path = loggedPath(req);
    const query = req.originalUrl.indexOf('?');
    const match = api.table.match(req.method, query === -1 ? req.originalUrl : req.originalUrl.slice(0, query))?.operation;
    for (const violation of api.check(match, response)) {
      hooks.violation(req, { ...violation, operation: match?.operationId ?? 'unmatched', version: version!, status: response.status, path });
    }
  };
}

/**
 * Where access tokens' keys are found: `tokens.jwksUrl`; else, when a
 * document's oauth2 scheme gives its authorization server's metadata (3.2's
 * `oauth2MetadataUrl`, RFC 8414) and `tokens.audience` says which tokens are
 * for this API, that metadata; else nowhere (token requirements answer 401
 * saying why).
 */
function tokenKeysOf(apis: readonly ServedApi[], tokens: TokenOptions | undefined): TokenSettings['keys'] | undefined {
  if (tokens?.jwksUrl !== undefined) return { jwksUrl: tokens.jwksUrl };
  if (tokens?.audience === undefined) return undefined;
  for (const api of apis) {
    for (const raw of Object.values(api.contract.components?.securitySchemes ?? {})) {
      const scheme = deref(api.contract, raw) as { type?: unknown; oauth2MetadataUrl?: unknown };
      if (scheme.type === 'oauth2' && typeof scheme.oauth2MetadataUrl === 'string' && /^https?:\/\//.test(scheme.oauth2MetadataUrl))
        return { metadataUrl: scheme.oauth2MetadataUrl };
    }
  }
  return undefined;
}

/**
 * Stops the start on what a document says that cannot be served (naming the
 * document, the operation, the reason); returns what is refused while the
 * rest is served, for the log.
 */
function refuseWhatCannotBeServed(apis: readonly ServedApi[], sources: readonly string[], tokensVerifiable: boolean): Array<Engine['warnings'][number]> {
  const warnings: Array<Engine['warnings'][number]> = [];
  const errors: string[] = [];
  for (const [index, api] of apis.entries()) {
    const found = contractRefusals(api.contract, { label: sources[index]!, tokensVerifiable });
    errors.push(...found.errors);
    warnings.push(...found.warnings.map((message) => ({ document: api.name, kind: 'refused' as const, message })));
  }
  if (errors.length > 0) throw new Error(`the contract cannot be served:\n  ${errors.join('\n  ')}`);
  return warnings;
}

/** The query parameters that carry API keys (apiKey schemes `in: query`): known to every operation's parameter check. */
function apiKeyQueryNames(document: OpenApiDocument): string[] {
  return [...servedSchemes(document.components?.securitySchemes).values()].flatMap((scheme) =>
    scheme.type === 'apiKey' && scheme.in === 'query' ? [scheme.parameter] : [],
  );
}

/**
 * Where documents carry credentials besides `Authorization`: the names of
 * their apiKey headers, query parameters and cookies, which a log must never
 * show.
 *
 * @example const logger = pino({ redact: credentialNames([document]).map((name) => `req.headers["${name.toLowerCase()}"]`) });
 */
export function credentialNames(documents: readonly OpenApiDocument[]): string[] {
  return [
    ...new Set(
      documents.flatMap((document) =>
        [...servedSchemes(document.components?.securitySchemes).values()].flatMap((scheme) => (scheme.type === 'apiKey' ? [scheme.parameter] : [])),
      ),
    ),
  ];
}
