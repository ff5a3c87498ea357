import type { Handler, HandlerResponse } from './types';
import type { OrderRepository } from '../storage';
import { orderView } from '../adoption';
import { conflict, notFound } from '../errors';

type Answer = HandlerResponse<'placeOrder', 'v2'>;
/** What is stored for a retry to answer again: the outcome, without the headers made from it. */
type Outcome =
  | { status: 201; body: ReturnType<typeof orderView> }
  | { status: 404; body: ReturnType<typeof notFound> }
  | { status: 409; body: ReturnType<typeof conflict<'pet_not_available'>> };

/**
 * A customer's order for an available pet; the storage places it and makes
 * the pet pending in one transaction, so that of fifty orders at once for
 * one pet exactly one is placed. Retries with an `Idempotency-Key` answer
 * the first response again, as `createPet`'s do.
 */
export const placeOrder: Handler<'placeOrder', 'v2'> = async ({ body, headers }, { orders, idempotency, caller, basePath }) => {
  const key = headers['Idempotency-Key'];
  const place = (request?: number) => placed(orders, body.petId, caller.principal, request);
  if (key === undefined) return answer(await place(), basePath, false);
  const { replayed, response } = await idempotency.run({ owner: caller.principal, key, request: ['placeOrder', body] }, place, async (claim) => {
    const order = await orders.createdBy(claim);
    return order && { status: 201, body: orderView(order) };
  });
  return answer(response as Outcome, basePath, replayed);
};

/** The outcome as sent: a placed order's URL and version (every order is placed at version 1), and whether it is a replay. */
function answer(outcome: Outcome, basePath: string, replayed: boolean): Answer {
  const replay = replayed ? { 'Idempotent-Replayed': 'true' } : undefined;
  if (outcome.status !== 201) return { ...outcome, ...(replay && { headers: replay }) };
  return { ...outcome, headers: { Location: `${basePath}/store/orders/${outcome.body.id}`, ...replay }, etag: '1' };
}

async function placed(orders: OrderRepository, petId: number, owner: string, request: number | undefined): Promise<Outcome> {
  const placement = await orders.place(petId, owner, request === undefined ? {} : { request });
  switch (placement.outcome) {
    case 'placed':
      return { status: 201, body: orderView(placement.order) };
    case 'no_pet':
      return { status: 404, body: notFound(`pet ${petId} does not exist`) };
    case 'not_available': {
      // A retry that took over a claim whose first attempt was still placing: that order is this request's.
      const own = request === undefined ? undefined : await orders.createdBy(request);
      if (own) return { status: 201, body: orderView(own) };
      return { status: 409, body: conflict('pet_not_available', `pet ${petId} is ${placement.status}, not available`) };
    }
  }
}
