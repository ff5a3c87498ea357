import type { Request, Response, Router } from 'express';
import { operationTable } from '../../generated/operations';
import type { Handler, HandlerContext, HandlerRegistry, HandlerRequest, HandlerResponse, OperationId } from './handler';
import type { PetRepository } from '../storage/storage';
import { toExpressPath } from './express-path';

/**
 * Mounts one route per operation of the contract, each calling its typed
 * handler with the validated request and sending the response it returns.
 *
 * With response validation on, responses go through `res.json`, which the
 * validator intercepts. Otherwise they are written directly: Express's
 * `res.send` machinery (charset and freshness checks, ETag logic) was the
 * largest single cost of a request, and a handler's body is already typed
 * from the contract (and every response of the test suite is checked against it).
 */
export function mountOperations(
  router: Router,
  handlers: HandlerRegistry,
  pets: PetRepository,
  options: { validateResponses: boolean },
): void {
  const send = options.validateResponses ? sendThroughValidator : sendDirect;
  for (const operationId of Object.keys(operationTable) as OperationId[]) {
    const { method, path } = operationTable[operationId];
    const handler = handlers[operationId] as Handler<OperationId>;
    router[method](toExpressPath(path), async (req: Request, res: Response) => {
      const request = { params: req.params, query: req.query, body: req.body } as unknown as HandlerRequest<OperationId>;
      const context: HandlerContext = { pets, caller: req.caller! };
      send(res, await handler(request, context));
    });
  }
}

function sendThroughValidator(res: Response, response: HandlerResponse<OperationId>): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}

function sendDirect(res: Response, response: HandlerResponse<OperationId>): void {
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
