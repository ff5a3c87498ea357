import type { Request, Response } from 'express';
import type { Handler, HandlerContext, HandlerRegistry, HandlerRequest, OperationId } from '../handlers/types';
import type { PetRepository } from '../storage/storage';
import { isStub } from '../handlers/stub';
import { ApiError, notImplemented } from '../errors/api-error';
import type { OperationMock } from '../mock/mock-responses';
import { NO_BYPASS, replayKey, type LayerBypass } from './layer-bypass';
import type { Stage } from './stage';

/** What is sent: a handler's response, or a mock's. */
interface OutgoingResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface AnswerOptions {
  validateResponses: boolean;
  /** Mock mode: the example answers of the stubbed operations (`npm run mock`). */
  mocks?: ReadonlyMap<string, OperationMock>;
  /** Measurement only: `handler` replays each URL's first response, `serialization` its first JSON text. */
  bypass?: LayerBypass;
}

/**
 * The last stage of an operation's pipeline: calls its typed handler with the
 * validated request and sends the response it returns. A stub
 * (`notImplementedHandler`) is answered here: 501 `not_implemented`, or in
 * mock mode an example from the contract. Either way the request has already
 * been authenticated, counted and validated.
 *
 * With response validation on, responses go through `res.json`, which the
 * validator intercepts. Otherwise they are written directly with one
 * `writeHead`: Express's `res.send` machinery (charset and freshness checks,
 * ETag logic) was the largest single cost of a request, and a handler's body
 * is already typed from the contract (and every response of the test suite is
 * checked against it).
 *
 * @example stages.push(answerStage('getPet', handlers, pets, { validateResponses: false }));
 */
export function answerStage(operationId: OperationId, handlers: HandlerRegistry, pets: PetRepository, options: AnswerOptions): Stage {
  const bypass = options.bypass ?? NO_BYPASS;
  const send = sender(options.validateResponses, bypass);
  const entry = handlers[operationId] as HandlerRegistry[OperationId] | undefined;
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
        // A bad Prefer header is the framework's 400, declared or not: written
        // directly, so response validation does not judge it as the operation's.
        sendDirect(res, { status: error.status, headers: { ...error.headers }, body: error.toBody() });
        return;
      }
      if (!response) throw new ApiError(501, 'not_implemented', notImplemented(operationId).message);
      // Rate-limit and deprecation headers are already set; declared headers they do not cover get examples.
      const headers = Object.fromEntries(Object.entries(response.headers ?? {}).filter(([name]) => !res.hasHeader(name)));
      send(req, res, { ...response, headers });
    };
  }
  const handler = entry as Handler<OperationId>;
  const call = (req: Request): Promise<OutgoingResponse> =>
    handler({ params: req.params, query: req.query, body: req.body } as unknown as HandlerRequest<OperationId>, { pets, caller: req.caller } as HandlerContext);
  if (bypass.has('handler')) {
    const responses = new Map<string, OutgoingResponse>();
    return async (req, res) => {
      const key = replayKey(req);
      let response = responses.get(key);
      if (!response) responses.set(key, (response = await call(req)));
      send(req, res, response);
    };
  }
  return async (req, res) => {
    send(req, res, await call(req));
  };
}

type Send = (req: Request, res: Response, response: OutgoingResponse) => void;

function sender(validateResponses: boolean, bypass: LayerBypass): Send {
  if (validateResponses) return (_req, res, response) => sendThroughValidator(res, response);
  if (!bypass.has('serialization')) return (_req, res, response) => sendDirect(res, response);
  const texts = new Map<string, string>();
  return (req, res, response) => {
    const key = replayKey(req);
    let text = texts.get(key);
    if (text === undefined) texts.set(key, (text = JSON.stringify(response.body)));
    sendDirect(res, response, text);
  };
}

function sendThroughValidator(res: Response, response: OutgoingResponse): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}

function sendDirect(res: Response, response: OutgoingResponse, serialized?: string): void {
  if (response.body === undefined) {
    res.writeHead(response.status, response.headers).end();
    return;
  }
  const json = serialized ?? JSON.stringify(response.body);
  if (response.headers) for (const name in response.headers) res.setHeader(name, response.headers[name]!);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.writeHead(response.status).end(json);
}
