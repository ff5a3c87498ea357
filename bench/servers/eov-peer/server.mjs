// eov-peer: the Pet Adoption API as an Express 5 application would build it
// from the documentation of its libraries, doing the project's work per
// request (bench/README.md, "The peers"):
//
//   helmet()                                   security headers (helmet's defaults)
//   pino-http on pino.destination({ sync: false })  one access-log line per request, to a file;
//                                              X-Request-Id as pino-http's README shows (genReqId)
//   authenticate                               Bearer key looked up by its SHA-256 (cached 2 s)
//   rateLimit() x 2                            per key: a day and a minute window with the plan's
//                                              limits (express-rate-limit, its MemoryStore);
//                                              without a valid key, per IP
//   express.json()                             the body parser express-openapi-validator needs
//   OpenApiValidator.middleware() x 2          the contracts openapi/v1/openapi.yaml and
//                                              openapi/v2/openapi.yaml, one validator each (its
//                                              guide "Multiple API specs"): validateRequests,
//                                              validateSecurity (its handler refuses a request
//                                              without a caller: 401)
//   routes, error handler                      better-sqlite3 (placeOrder in a db.transaction);
//                                              the contract's Error object
//
// Its packages come from bench/servers/eov-peer/node_modules only (its own
// package.json, installed by the bench), never from the project's.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Database from 'better-sqlite3';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import pino from 'pino';
import { pinoHttp } from 'pino-http';
import {
  IP_LIMIT_PER_MINUTE,
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
  'better-sqlite3',
  'express',
  'express-openapi-validator',
  'express-rate-limit',
  'helmet',
  'pino',
  'pino-http',
]);

const db = openDatabase(Database, settings.databaseFile);
const authenticate = keyCheck(db);
const pets = petStore(db);
const orders = orderStore(db);
/** Every path the API serves under: the v1 operations, and v2's placeOrder. */
const API_PATHS = [settings.basePath, settings.v2BasePath];
const PATHS = { listPets: '/pets', createPet: '/pets', getPet: '/pets/{petId}' };

// pino's asynchronous file destination, as pino's docs show it; flushed when the server stops.
const destination = pino.destination({ dest: settings.accessLogFile, sync: false });
const logger = pino({ level: 'info' }, destination);

const app = express();
app.use(helmet());
app.use(
  pinoHttp({
    logger,
    // What the project's access line says of a request (its id, method, path, client, status, duration),
    // not pino-http's default of every request and response header (which would also log the API key).
    serializers: {
      req: (req) => ({ id: req.id, method: req.method, url: req.url, remoteAddress: req.remoteAddress }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
    genReqId(req, res) {
      const existing = req.headers['x-request-id'];
      const id = typeof existing === 'string' && /^[\x21-\x7e]{1,128}$/.test(existing) ? existing : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
  }),
);
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

// Who is calling: a refusal is remembered, not answered yet, so the IP window counts it.
app.use(API_PATHS, (req, _res, next) => {
  const { caller, failure } = authenticate(req.headers.authorization);
  req.caller = caller;
  req.authFailure = failure;
  next();
});

// Two windows per key, with the plan's limits (express-rate-limit's docs: `limit` and
// `keyGenerator` as functions of the request, `identifier` naming the draft-8 policy).
const rateLimitKey = (req) => (req.caller ? req.caller.principal : ipKeyGenerator(req.ip));
const tooMany = (window) => (req) =>
  errorBody(
    429,
    'rate_limited',
    `rate limit exceeded: the ${req.caller ? `API key's ${window} limit` : 'limit for requests without a valid API key'} is ${req[`rateLimit_${window}`].limit} requests`,
  );
// One pair of limiters for both versions: a key's requests count together, as the project counts them.
app.use(
  API_PATHS,
  rateLimit({
    windowMs: 24 * 60 * 60 * 1000,
    limit: (req) => req.caller.perDay,
    skip: (req) => req.caller === undefined,
    keyGenerator: rateLimitKey,
    identifier: 'day',
    requestPropertyName: 'rateLimit_day',
    standardHeaders: 'draft-8',
    legacyHeaders: true,
    message: tooMany('day'),
  }),
  rateLimit({
    windowMs: 60 * 1000,
    limit: (req) => (req.caller ? req.caller.perMinute : IP_LIMIT_PER_MINUTE),
    keyGenerator: rateLimitKey,
    identifier: (req) => (req.caller ? 'minute' : 'ip'),
    requestPropertyName: 'rateLimit_minute',
    standardHeaders: 'draft-8',
    legacyHeaders: true,
    message: tooMany('minute'),
  }),
);

// express-openapi-validator parses no bodies itself.
app.use(express.json({ limit: '1mb' }));
// One validator per contract, as its guide to multiple API specs shows. The contracts' first
// servers are a variable (`{base_url}`), from which the validator derives the base path `/`: each
// would claim the other's paths (a 404), so each ignores the paths outside its version (its
// `ignorePaths` option) and lets them through to the other.
for (const [apiSpec, basePath] of [
  [settings.contract, settings.basePath],
  [settings.v2Contract, settings.v2BasePath],
]) {
  app.use(
    OpenApiValidator.middleware({
      apiSpec,
      ignorePaths: (path) => !path.startsWith(`${basePath}/`),
      validateRequests: true,
      validateResponses: false,
      validateSecurity: {
        handlers: {
          // The key was looked up above (before the rate limits, which count per caller).
          bearerAuth(req) {
            if (req.caller) return true;
            throw Object.assign(new Error(req.authFailure), { status: 401 });
          },
        },
      },
    }),
  );
}

const deprecated = new Map();
/** Sets the deprecation headers of a deprecated operation (from its extensions in the contract). */
function announceDeprecation(req, res) {
  const operation = req.openapi?.schema;
  if (!operation?.operationId) return;
  let headers = deprecated.get(operation.operationId);
  if (headers === undefined) {
    headers = deprecationHeaders(operation, (id) => PATHS[id]) ?? null;
    deprecated.set(operation.operationId, headers);
  }
  if (headers) res.set(headers);
}

app.get(`${settings.basePath}/pets`, (req, res) => {
  const { limit = 20, status, cursor } = req.query;
  const page = pets.list({ limit: Number(limit), status, cursor });
  if (page.badCursor) {
    res
      .status(400)
      .json(
        errorBody(400, 'invalid_request', 'query.cursor was not issued by this server for this limit and status: follow the Link header of the previous page'),
      );
    return;
  }
  if (page.link) res.set('Link', page.link);
  res.json(page.body);
});
app.post(`${settings.basePath}/pets`, (req, res) => {
  res.status(201).json(pets.create(req.body));
});
app.get(`${settings.basePath}/pets/:petId`, (req, res) => {
  announceDeprecation(req, res);
  const pet = pets.get(Number(req.params.petId));
  if (pet) res.json(pet);
  else res.status(404).json(errorBody(404, 'not_found', `pet ${req.params.petId} does not exist`));
});
app.get(`${settings.basePath}/store/orders`, (_req, res) => {
  res.status(501).json(errorBody(501, 'not_implemented', 'listStoreOrders is declared in the contract but not implemented yet'));
});
// v2 placeOrder: the body validated by the v2 validator (NewOrder: petId only, no other property).
app.post(`${settings.v2BasePath}/store/orders`, (req, res) => {
  const { petId } = req.body;
  const placement = orders.place(petId, req.caller.principal);
  if (placement.outcome === 'placed') {
    res
      .status(201)
      .set({ Location: `${settings.v2BasePath}/store/orders/${placement.order.id}`, ETag: '"1"' })
      .json(placement.order);
  } else if (placement.outcome === 'no_pet') {
    res.status(404).json(errorBody(404, 'not_found', `pet ${petId} does not exist`));
  } else {
    res.status(409).json(errorBody(409, 'pet_not_available', `pet ${petId} is ${placement.status}, not available`));
  }
});
app.use((_req, res) => {
  res.status(404).json(errorBody(404, 'not_found', 'no such route: see /docs for the API reference'));
});

// Four parameters: Express tells an error handler by its arity.
app.use((err, req, res, _next) => {
  const status = Number.isInteger(err.status) && err.status >= 400 && err.status < 600 ? err.status : 500;
  if (status === 500) req.log.error({ err }, 'request failed');
  announceDeprecation(req, res);
  if (status === 401) res.set('WWW-Authenticate', 'Bearer realm="pet-adoption"');
  res.status(status).json(errorBody(status, codeOf(status), messageOf(err, req, status)));
});

/** The message of an error, named as the project names it (`query.limit must be <= 100`, `body.name is required`). */
function messageOf(err, req, status) {
  if (status === 500) return 'internal error';
  if (status === 401) return req.authFailure ?? err.message;
  if (status === 404 && err.errors) return 'no such route: see /docs for the API reference';
  const issue = err.errors?.[0];
  if (status !== 400 || !issue?.path) return err.message ?? 'invalid request';
  const where = issue.path.replace(/^\//, '').replaceAll('/', '.');
  if (issue.errorCode === 'required.openapi.validation') return `${where} is required`;
  if (issue.errorCode === 'additionalProperties.openapi.validation') return `${where} is not allowed (unknown property)`;
  return `${where} ${issue.message}`;
}

const server = http.createServer(app);
server.listen(settings.port, settings.host, () => logger.info({ port: settings.port }, 'eov-peer listening'));
stopOnSignals(
  () =>
    new Promise((resolve) => {
      server.close(() => {
        destination.flushSync();
        db.close();
        resolve();
      });
      server.closeIdleConnections();
    }),
);
