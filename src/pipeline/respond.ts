import type { Request, Response } from 'express';
import type { AnyHandlerRegistry, HandlerContext, HandlerServices } from '../handlers/types';
import type { SpecOperation } from '../contract/load-spec';
import type { Repositories } from '../storage/storage';
import { isStub } from '../handlers/types/stub';
import { ApiError, notImplemented } from '../errors/api-error';
import type { OperationMock } from '../mock/mock-responses';
import type { Stage } from './stage';
import { sendJson } from './send-json';

/** What is sent: a handler's response, or a mock's. */
export interface OutgoingResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Written as it is, never judged by response validation: the framework's
   * own answers, such as a stub's 400 for a bad `Prefer` header.
   */
  direct?: boolean;
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The response the handle phase produced, for the serialize phase to write. */
    answer?: OutgoingResponse;
  }
}

export interface HandleOptions {
  /** What handlers may use besides the request (the caller is added per request). */
  context: Repositories & HandlerServices;
  /** Mock mode: the example answers of the stubbed operations (`npm run mock`). */
  mocks?: ReadonlyMap<string, OperationMock>;
}

/**
 * The handle phase of one operation: calls its typed handler with the
 * validated request and keeps the response it returns for the serialize
 * phase. A stub (`notImplementedHandler`) is answered here: 501
 * `not_implemented`, or in mock mode an example from the contract. Either
 * way the request has already been authenticated, counted and validated.
 *
 * @example stages.push(handleStage(op, handlers, { context }));
 */
export function handleStage(op: SpecOperation, handlers: AnyHandlerRegistry, options: HandleOptions): Stage {
  const { operationId } = op;
  const entry = handlers[operationId];
  if (entry === undefined) {
    // An operation of a contract this registry was not generated from (tests that edit the contract): not served.
    return () => {
      throw new ApiError(404, 'not_found', 'no such route: see /docs for the API reference');
    };
  }
  if (isStub(entry)) {
    const mock = options.mocks?.get(operationId);
    return (req, res) => {
      let response: OutgoingResponse | undefined;
      try {
        response = mock?.answer(req.get('prefer'));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        // A bad Prefer header is the framework's 400, declared or not.
        req.answer = { status: error.status, headers: { ...error.headers }, body: error.toBody(), direct: true };
        return;
      }
      if (!response) throw new ApiError(501, 'not_implemented', notImplemented(operationId).message);
      // Rate-limit and deprecation headers are already set; declared headers they do not cover get examples.
      const headers = Object.fromEntries(Object.entries(response.headers ?? {}).filter(([name]) => !res.hasHeader(name)));
      req.answer = { ...response, headers };
    };
  }
  // The registry was checked against its version's contract where it is declared (src/handlers/index.ts).
  const handler = entry as (request: unknown, context: HandlerContext) => Promise<OutgoingResponse>;
  const shared = options.context;
  const headerNames = declaredHeaders(op);
  // Most operations declare no header parameter: they share one empty object.
  const headersOf =
    headerNames.length === 0
      ? (): Record<string, string | undefined> => NO_HEADERS
      : (req: Request): Record<string, string | undefined> => Object.fromEntries(headerNames.map((name) => [name, req.get(name)]));
  return async (req) => {
    const context = { ...shared, caller: req.caller } as HandlerContext;
    const headers = headersOf(req);
    req.answer = await handler({ params: req.params, query: req.query, headers, body: req.body }, context);
  };
}

/**
 * The serialize phase: writes the response the handle phase produced. With
 * response validation on, it goes through `res.json`, which the validator
 * intercepts; otherwise it is written directly (`sendJson`): a handler's body
 * is already typed from the contract, every response of the test suite is
 * checked against it, and in production a share of them is checked after it
 * is sent (src/observability/response-sampling.ts).
 *
 * @example stages.push(serializeStage(config.validateResponses));
 */
export function serializeStage(validateResponses: boolean): Stage {
  return (req, res) => {
    const answer = req.answer;
    if (!answer) throw new Error(`the handle phase produced no response for ${req.method} ${req.path}`);
    if (validateResponses && !answer.direct) sendThroughValidator(res, answer);
    else sendJson(res, answer.status, answer.body, answer.headers);
  };
}

const NO_HEADERS: Readonly<Record<string, string | undefined>> = Object.freeze({});

/** The header parameters an operation declares (the validator has checked them), by their names in the contract. */
function declaredHeaders(op: SpecOperation): string[] {
  const parameters = (op.operation['parameters'] ?? []) as Array<{ in?: string; name?: string }>;
  return parameters.filter((parameter) => parameter.in === 'header' && typeof parameter.name === 'string').map((parameter) => parameter.name!);
}

function sendThroughValidator(res: Response, response: OutgoingResponse): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}
