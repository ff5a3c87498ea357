// fastify-peer: the Pet Adoption API as a Fastify 5 application would build it
// from the documentation of its libraries, doing the project's work per
// request (bench/README.md, "The peers"):
//
//   Fastify's pino logger on pino.destination({ sync: false })  one access-log line per request
//                                              (a LogController that drops the "incoming request"
//                                              line, keeps "request completed"), to a file
//   @fastify/helmet                            security headers (helmet's defaults)
//   the API, in an encapsulated plugin:
//     onRequest hook                           Bearer key looked up by its SHA-256 (cached 2 s)
//     @fastify/rate-limit x 2                  per key: a day and a minute window with the plan's
//                                              limits (its LocalStore); without a valid key, per IP
//     fastify-openapi-glue x 2                 routes, schemas (validation by Fastify's Ajv,
//                                              serialization by fast-json-stringify) and the
//                                              security handler, from openapi/v1/openapi.yaml under
//                                              /v1 and openapi/v2/openapi.yaml under /v2 (placeOrder)
//   better-sqlite3 (placeOrder in a db.transaction); the contract's Error object from one error handler
//
// Its packages come from bench/servers/fastify-peer/node_modules only (its own
// package.json, installed by the bench), never from the project's.
import { randomUUID } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import helmet from '@fastify/helmet';
import Database from 'better-sqlite3';
import Fastify, { LogController } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import pino from 'pino';
import {
  IP_LIMIT_PER_MINUTE,
  MISSING_KEY,
  assertOwnPackages,
  codeOf,
  deprecationHeaders,
  errorBody,
  keyCheck,
  openDatabase,
  orderStore,
  petStore,
  settings,
  stopOnSignals,
} from '../peer-service.mjs';

assertOwnPackages(import.meta.url, (name) => import.meta.resolve(name), [
  '@fastify/helmet',
  '@fastify/rate-limit',
  'better-sqlite3',
  'fastify',
  'fastify-openapi-glue',
  'pino',
]);

const db = openDatabase(Database, settings.databaseFile);
const authenticate = keyCheck(db);
const pets = petStore(db);
const orders = orderStore(db);
const PATHS = { listPets: '/pets', createPet: '/pets', getPet: '/pets/{petId}' };

/** One access-log line per request, as Fastify's Server reference shows: the completion line only. */
class AccessLog extends LogController {
  incomingRequest() {}
}

// pino's asynchronous file destination, as pino's docs show it; flushed when the server stops.
const destination = pino.destination({ dest: settings.accessLogFile, sync: false });
const fastify = Fastify({
  logger: { level: 'info', stream: destination },
  logController: new AccessLog(),
  // The client's X-Request-Id when it is safe (1 to 128 printable ASCII characters), else a UUID.
  genReqId(req) {
    const existing = req.headers['x-request-id'];
    return typeof existing === 'string' && /^[\x21-\x7e]{1,128}$/.test(existing) ? existing : randomUUID();
  },
  // Fastify's Ajv drops properties a schema does not declare by default; the contract refuses
  // them (NewPet: additionalProperties false, "a client-sent id is a 400, not silently dropped").
  ajv: { customOptions: { removeAdditional: false } },
});

await fastify.register(helmet);
fastify.addHook('onRequest', async (request, reply) => {
  reply.header('x-request-id', request.id);
});
fastify.get('/healthz', async () => ({ status: 'ok' }));

// Before the API's plugin: an encapsulated context keeps the handlers its parent had when it was registered.
const CONTEXTS = { querystring: 'query', params: 'params', headers: 'headers', body: 'body' };
fastify.setErrorHandler((error, request, reply) => {
  const status = Number.isInteger(error.statusCode) && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
  if (status === 500) request.log.error({ err: error }, 'request failed');
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="pet-adoption"');
  reply.code(status).send(errorBody(status, codeOf(status), messageOf(error, request, status)));
});
fastify.setNotFoundHandler((_request, reply) => {
  reply.code(404).send(errorBody(404, 'not_found', 'no such route: see /docs for the API reference'));
});

await fastify.register(async (api) => {
  // Who is calling: a refusal is remembered, not answered yet, so the IP window counts it.
  api.decorateRequest('caller', null);
  api.decorateRequest('authFailure', null);
  // The contract's request bodies are JSON only: without Fastify's text/plain parser, another type is a 415.
  api.removeContentTypeParser('text/plain');
  api.addHook('onRequest', async (request) => {
    const { caller, failure } = authenticate(request.headers.authorization);
    if (caller) request.caller = caller;
    else request.authFailure = failure;
  });

  // Two windows per key, with the plan's limits (@fastify/rate-limit's README: `max` and
  // `keyGenerator` as functions of the request, a custom `errorResponseBuilder`). The minute
  // window is registered last, so its x-ratelimit-* headers are the ones sent.
  const refusal = (window) => (request, context) =>
    Object.assign(
      new Error(
        `rate limit exceeded: the ${request.caller ? `API key's ${window} limit` : 'limit for requests without a valid API key'} is ${context.max} requests`,
      ),
      { statusCode: 429 },
    );
  await api.register(rateLimit, {
    timeWindow: 24 * 60 * 60 * 1000,
    max: (request) => request.caller.perDay,
    allowList: (request) => request.caller === null,
    // Called before allowList: a request without a caller needs a key too.
    keyGenerator: (request) => request.caller?.principal ?? request.ip,
    errorResponseBuilder: refusal('day'),
  });
  await api.register(rateLimit, {
    timeWindow: 60 * 1000,
    max: (request) => (request.caller ? request.caller.perMinute : IP_LIMIT_PER_MINUTE),
    keyGenerator: (request) => (request.caller ? request.caller.principal : request.ip),
    errorResponseBuilder: refusal('minute'),
  });

  const deprecated = new Map();
  const service = {
    async listPets(request, reply) {
      const { limit, status, cursor } = request.query;
      const page = pets.list({ limit, status, cursor });
      if (page.badCursor) {
        return reply
          .code(400)
          .send(
            errorBody(
              400,
              'invalid_request',
              'query.cursor was not issued by this server for this limit and status: follow the Link header of the previous page',
            ),
          );
      }
      if (page.link) reply.header('link', page.link);
      return page.body;
    },
    async createPet(request, reply) {
      reply.code(201);
      return pets.create(request.body);
    },
    async getPet(request, reply) {
      let headers = deprecated.get('getPet');
      if (headers === undefined) {
        headers = deprecationHeaders(request.routeOptions.schema, (id) => PATHS[id]) ?? null;
        deprecated.set('getPet', headers);
      }
      if (headers) reply.headers(headers);
      const pet = pets.get(request.params.petId);
      if (!pet) return reply.code(404).send(errorBody(404, 'not_found', `pet ${request.params.petId} does not exist`));
      return pet;
    },
    async listStoreOrders(_request, reply) {
      return reply.code(501).send(errorBody(501, 'not_implemented', 'listStoreOrders is declared in the contract but not implemented yet'));
    },
  };
  const security = {
    // The key was looked up in the onRequest hook (before the rate limits, which count per caller).
    bearerAuth(request) {
      if (request.caller === null) throw Object.assign(new Error(request.authFailure ?? MISSING_KEY), { statusCode: 401 });
    },
  };
  // v2: placeOrder only (the other v2 operations get fastify-openapi-glue's "not implemented").
  const v2Service = {
    async placeOrder(request, reply) {
      const { petId } = request.body;
      const placement = orders.place(petId, request.caller.principal);
      if (placement.outcome === 'no_pet') return reply.code(404).send(errorBody(404, 'not_found', `pet ${petId} does not exist`));
      if (placement.outcome === 'not_available') {
        return reply.code(409).send(errorBody(409, 'pet_not_available', `pet ${petId} is ${placement.status}, not available`));
      }
      reply.code(201).headers({ location: `${settings.v2BasePath}/store/orders/${placement.order.id}`, etag: '"1"' });
      return placement.order;
    },
  };
  // One plugin per contract and prefix, as fastify-openapi-glue's servers doc ("Multiple prefixes") shows;
  // both under this context's key check and rate limits, so a key's requests count together.
  await api.register(openapiGlue, { specification: settings.contract, serviceHandlers: service, securityHandlers: security, prefix: settings.basePath });
  await api.register(openapiGlue, {
    specification: settings.v2Contract,
    serviceHandlers: v2Service,
    securityHandlers: security,
    prefix: settings.v2BasePath,
  });
});

/** The message of an error, named as the project names it (`query.limit must be <= 100`, `body.name is required`). */
function messageOf(error, request, status) {
  if (status === 500) return 'internal error';
  // fastify-openapi-glue's SecurityError says which schemes failed; the handler's own error says why.
  if (status === 401) return request.authFailure ?? MISSING_KEY;
  const issue = error.validation?.[0];
  if (!issue) return error.message;
  const where = [CONTEXTS[error.validationContext] ?? error.validationContext, ...issue.instancePath.split('/').filter(Boolean)];
  if (issue.keyword === 'required') return `${[...where, issue.params.missingProperty].join('.')} is required`;
  if (issue.keyword === 'additionalProperties') return `${[...where, issue.params.additionalProperty].join('.')} is not allowed (unknown property)`;
  if (issue.keyword === 'enum') return `${where.join('.')} ${issue.message}: ${issue.params.allowedValues.join(', ')}`;
  return `${where.join('.')} ${issue.message}`;
}

await fastify.listen({ port: settings.port, host: settings.host });
stopOnSignals(async () => {
  await fastify.close();
  destination.flushSync();
  db.close();
});
