/**
 * Type-level tests, checked by `tsc --noEmit` (npm run typecheck, part of
 * npm test). Each `@ts-expect-error` line must fail to compile: if the typing
 * ever lets it through, tsc reports an unused directive and the run fails.
 * A directive accepts any error, so each one also names the error it is
 * about after an em dash (`— TS2322: fragment of the message`), and
 * test/handler-types.test.ts compiles this file without the directives and
 * checks that each line fails with exactly that error.
 */
import { handlers, notImplementedHandler, type Handler, type HandlerRegistry } from '../../src/service/handlers';
import { ApiError } from '@spec-first/engine';
import { notImplemented } from '@spec-first/engine/testing';

const { listPets } = handlers;
import type { Caller } from '../../src/service/keys';

const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'available' as const };

// The real registry is complete and exact: the positive case, on the registry the server uses.
export const complete = handlers satisfies HandlerRegistry;

// A missing handler is a compile error.
const { getPet: _omitted, ...withoutGetPet } = complete;
// @ts-expect-error getPet is missing — TS1360: Property 'getPet' is missing
export const missing = withoutGetPet satisfies HandlerRegistry;

// An extra handler (no such operation in the contract) is a compile error.
export const extra = {
  ...complete,
  // @ts-expect-error adoptPet is not an operation of the contract — TS2353: 'adoptPet' does not exist in type 'HandlerRegistry'
  adoptPet: listPets,
} satisfies HandlerRegistry;

// A handler registered under another operation is a compile error.
// @ts-expect-error listPets registered as getPet — TS2322: 'Handler<"listPets", "v1" | "v2">' is not assignable to type 'HandlerOf<Contracts, "getPet"
export const swapped = { ...complete, getPet: listPets } satisfies HandlerRegistry;

// A status the contract does not declare for the operation.
// @ts-expect-error createPet declares 201, not 200 — TS2322: Type '200' is not assignable to type
export const wrongStatus: Handler<'createPet'> = async () => ({ status: 200, body: pet });

// A body that does not match the declared schema.
// @ts-expect-error Pet requires categoryId — TS2322: Property 'categoryId' is missing
export const wrongBody: Handler<'createPet'> = async () => ({ status: 201, body: { id: 1, name: 'Rex', status: 'sold' } });

// An error body with a code outside the ErrorCode enum.
// @ts-expect-error 'missing' is not an ErrorCode — TS2322: Type '"missing"' is not assignable to type '"invalid_request"
export const wrongCode: Handler<'getPet'> = async () => ({ status: 404, body: { code: 'missing', message: 'no pet', status: 404 } });

// A 200 on an operation that does not declare it.
// @ts-expect-error listStoreOrders declares no 200 response — TS2322: Type '200' is not assignable to type
export const undeclared: Handler<'listStoreOrders'> = async () => ({ status: 200, body: [] });

// Requests are typed from the contract too.
export const typedRequest: Handler<'getPet'> = async ({ params, query, body }) => {
  // @ts-expect-error petId is an integer, not a string — TS2339: Property 'toUpperCase' does not exist on type 'number'
  params.petId.toUpperCase();
  // @ts-expect-error getPet has no query parameters — TS2339: Property 'limit' does not exist on type 'Record<never, never>
  void query.limit;
  // getPet has no body: it is undefined, never an object to read from.
  const absent: undefined = body;
  void absent;
  return { status: 200, body: pet };
};

export const defaults: Handler<'listPets'> = async ({ query }) => {
  // limit has a schema default, so it is always present after validation...
  const limit: number = query.limit;
  // @ts-expect-error ...while status has none and may be absent — TS2322: Type 'undefined' is not assignable to type 'string'
  const status: string = query.status;
  void [limit, status];
  return { status: 200, body: [] };
};

export const bodyDefaults: Handler<'createPet'> = async ({ body }) => {
  // status has a schema default, so the validated body always carries it.
  const status: 'available' | 'pending' | 'sold' = body.status;
  // @ts-expect-error categoryId is a number — TS2322: Type 'number' is not assignable to type 'string'
  const category: string = body.categoryId;
  void category;
  return { status: 201, body: { ...body, id: 1, status } };
};

// "Not implemented yet" is a stub (the framework answers it), allowed for any operation,
// whatever it declares: listPets declares no 501.
export const stubbed = { ...complete, listPets: notImplementedHandler('listPets') } satisfies HandlerRegistry;

// ...but a real handler still cannot answer 501 where the operation does not declare it.
// @ts-expect-error getPet declares no 501 response — TS2322: Type '501' is not assignable to type
export const handler501: Handler<'getPet'> = async () => ({ status: 501, body: notImplemented('getPet') });

// Where 501 is declared, a handler may return it.
export const declared501: Handler<'listStoreOrders'> = async () => ({ status: 501, body: notImplemented('listStoreOrders') });

// A stub belongs to one operation: another operation's stub is a compile error...
// @ts-expect-error the stub of getPet registered as listPets — TS2322: Type '"getPet"' is not assignable to type '"listPets"'
export const wrongStub = { ...complete, listPets: notImplementedHandler('getPet') } satisfies HandlerRegistry;

// ...and only notImplementedHandler makes one (the brand is a private symbol).
// @ts-expect-error a look-alike object is not a stub — TS2322: Property '[STUB]' is missing
export const fakeStub = { ...complete, listPets: { operationId: 'listPets' as const } } satisfies HandlerRegistry;

// @ts-expect-error no such operation — TS2345: Argument of type '"adoptPet"' is not assignable
notImplementedHandler('adoptPet');

// An operation that requires a key gives its handler the caller.
export const withCaller: Handler<'listPets'> = async (_request, { caller }) => {
  const plan: Caller['plan'] = caller.plan;
  void plan;
  return { status: 200, body: [] };
};

// An ApiError carries a code the engine or the service declared (ThrownErrorCodes): the service's own codes too...
export const serviceCode = new ApiError(429, 'rate_limited', 'rate limit exceeded');
// ...and nothing else.
// @ts-expect-error not a declared error code — TS2345: Argument of type '"no_such_code"' is not assignable
export const undeclaredCode = new ApiError(400, 'no_such_code', 'made up');
