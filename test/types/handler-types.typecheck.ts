/**
 * Type-level tests, checked by `tsc --noEmit` (npm run typecheck, part of
 * npm test). Each `@ts-expect-error` line must fail to compile: if the typing
 * ever lets it through, tsc reports an unused directive and the run fails.
 */
import { notImplementedHandler, type Handler, type HandlerRegistry } from '../../src/service/handlers/types';
import { handlers } from '../../src/service/handlers';
import { createPet } from '../../src/service/handlers/createPet';
import { getPet } from '../../src/service/handlers/getPet';
import { listPets } from '../../src/service/handlers/listPets';
import { listStoreOrders } from '../../src/service/handlers/listStoreOrders';
import { notImplemented } from '../../src/engine/errors/api-error';
import type { Caller } from '../../src/service/keys/caller';

const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'available' as const };

// The real registry is complete and exact (spread, so an operation a designer adds does not break these tests).
export const complete = { ...handlers, createPet, getPet, listPets, listStoreOrders } satisfies HandlerRegistry;

// A missing handler is a compile error.
const { getPet: _omitted, ...withoutGetPet } = complete;
// @ts-expect-error getPet is missing
export const missing = withoutGetPet satisfies HandlerRegistry;

// An extra handler (no such operation in the contract) is a compile error.
export const extra = {
  ...complete,
  // @ts-expect-error adoptPet is not an operation of the contract
  adoptPet: listPets,
} satisfies HandlerRegistry;

// A handler registered under another operation is a compile error.
// @ts-expect-error listPets returns an array where getPet returns one pet
export const swapped = { ...complete, getPet: listPets } satisfies HandlerRegistry;

// A status the contract does not declare for the operation.
// @ts-expect-error createPet declares 201, not 200
export const wrongStatus: Handler<'createPet'> = async () => ({ status: 200, body: pet });

// A body that does not match the declared schema.
// @ts-expect-error Pet requires categoryId
export const wrongBody: Handler<'createPet'> = async () => ({ status: 201, body: { id: 1, name: 'Rex', status: 'sold' } });

// An error body with a code outside the ErrorCode enum.
// @ts-expect-error 'missing' is not an ErrorCode
export const wrongCode: Handler<'getPet'> = async () => ({ status: 404, body: { code: 'missing', message: 'no pet', status: 404 } });

// A 200 on an operation that does not declare it.
// @ts-expect-error listStoreOrders declares no 200 response
export const undeclared: Handler<'listStoreOrders'> = async () => ({ status: 200, body: [] });

// Requests are typed from the contract too.
export const typedRequest: Handler<'getPet'> = async ({ params, query, body }) => {
  // @ts-expect-error petId is an integer, not a string
  params.petId.toUpperCase();
  // @ts-expect-error getPet has no query parameters
  void query.limit;
  // @ts-expect-error getPet has no body
  void body.name;
  return { status: 200, body: pet };
};

export const defaults: Handler<'listPets'> = async ({ query }) => {
  // limit has a schema default, so it is always present after validation...
  const limit: number = query.limit;
  // @ts-expect-error ...while status has none and may be absent
  const status: string = query.status;
  void [limit, status];
  return { status: 200, body: [] };
};

export const bodyDefaults: Handler<'createPet'> = async ({ body }) => {
  // status has a schema default, so the validated body always carries it.
  const status: 'available' | 'pending' | 'sold' = body.status;
  // @ts-expect-error categoryId is a number
  const category: string = body.categoryId;
  void category;
  return { status: 201, body: { ...body, id: 1, status } };
};

// "Not implemented yet" is a stub (the framework answers it), allowed for any operation,
// whatever it declares: listPets declares no 501.
export const stubbed = { ...complete, listPets: notImplementedHandler('listPets') } satisfies HandlerRegistry;

// ...but a real handler still cannot answer 501 where the operation does not declare it.
// @ts-expect-error getPet declares no 501 response
export const handler501: Handler<'getPet'> = async () => ({ status: 501, body: notImplemented('getPet') });

// Where 501 is declared, a handler may return it.
export const declared501: Handler<'listStoreOrders'> = async () => ({ status: 501, body: notImplemented('listStoreOrders') });

// A stub belongs to one operation: another operation's stub is a compile error...
// @ts-expect-error the stub of getPet registered as listPets
export const wrongStub = { ...complete, listPets: notImplementedHandler('getPet') } satisfies HandlerRegistry;

// ...and only notImplementedHandler makes one (the brand is a private symbol).
// @ts-expect-error a look-alike object is not a stub
export const fakeStub = { ...complete, listPets: { operationId: 'listPets' as const } } satisfies HandlerRegistry;

// @ts-expect-error no such operation
notImplementedHandler('adoptPet');

// An operation that requires a key gives its handler the caller.
export const withCaller: Handler<'listPets'> = async (_request, { caller }) => {
  const plan: Caller['plan'] = caller.plan;
  void plan;
  return { status: 200, body: [] };
};
