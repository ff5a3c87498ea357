import type { Request, Response, Router } from 'express';
import { operationTable } from '../../generated/operations';
import type { Handler, HandlerContext, HandlerRegistry, HandlerRequest, HandlerResponse, OperationId } from './handler';
import type { PetRepository } from '../storage/storage';
import { toExpressPath } from './express-path';

/**
 * Mounts one route per operation of the contract, each calling its typed
 * handler with the validated request and sending the response it returns.
 */
export function mountOperations(router: Router, handlers: HandlerRegistry, pets: PetRepository): void {
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

function send(res: Response, response: HandlerResponse<OperationId>): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}
