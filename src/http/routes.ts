import type { Request, Response, Router } from 'express';
import { operationTable } from '../../generated/operations';
import type { Handler, HandlerContext, HandlerRegistry, HandlerRequest, OperationId } from './handler';
import type { PetRepository } from '../storage/storage';
import { toExpressPath } from './express-path';
import { isStub } from './stub';
import { ApiError, notImplemented } from '../errors/api-error';
import type { OperationMock } from '../mock/mock-responses';

/** What is sent: a handler's response, or a mock's. */
interface OutgoingResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface MountOptions {
  validateResponses: boolean;
  /** Mock mode: the example answers of the stubbed operations (`npm run mock`). */
  mocks?: ReadonlyMap<string, OperationMock>;
}

/**
 * Mounts one route per operation of the contract, each calling its typed
 * handler with the validated request and sending the response it returns.
 * A stub (`notImplementedHandler`) is answered here: 501 `not_implemented`,
 * or in mock mode an example from the contract. Either way the request has
 * already been authenticated, counted and validated.
 *
 * With response validation on, responses go through `res.json`, which the
 * validator intercepts. Otherwise they are written directly: Express's
 * `res.send` machinery (charset and freshness checks, ETag logic) was the
 * largest single cost of a request, and a handler's body is already typed
 * from the contract (and every response of the test suite is checked against it).
 */
export function mountOperations(router: Router, handlers: HandlerRegistry, pets: PetRepository, options: MountOptions): void {
  const send = options.validateResponses ? sendThroughValidator : sendDirect;
  for (const operationId of Object.keys(operationTable) as OperationId[]) {
    const { method, path } = operationTable[operationId];
    const entry = handlers[operationId];
    if (isStub(entry)) {
      const mock = options.mocks?.get(operationId);
      router[method](toExpressPath(path), (req: Request, res: Response) => {
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
        send(res, { ...response, headers });
      });
      continue;
    }
    const handler = entry as Handler<OperationId>;
    router[method](toExpressPath(path), async (req: Request, res: Response) => {
      const request = { params: req.params, query: req.query, body: req.body } as unknown as HandlerRequest<OperationId>;
      const context = { pets, caller: req.caller } as HandlerContext;
      send(res, await handler(request, context));
    });
  }
}

function sendThroughValidator(res: Response, response: OutgoingResponse): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}

function sendDirect(res: Response, response: OutgoingResponse): void {
  if (response.body === undefined) {
    res.writeHead(response.status, response.headers).end();
    return;
  }
  const json = JSON.stringify(response.body);
  res
    .writeHead(response.status, {
      ...response.headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(json),
    })
    .end(json);
}
