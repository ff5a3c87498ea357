import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { compile as compileProxyList } from 'proxy-addr';
import { z } from 'zod';

/** Default database: an SQLite file under the working directory. */
export const DEFAULT_DATABASE_URL = 'sqlite:data/pets.db';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** More processes than this is a typo, not a machine. */
const MAX_WORKERS = 256;

const TRUST_PROXY_TRUE_MESSAGE =
  'true is refused: it trusts whatever a client writes first in X-Forwarded-For; ' +
  'give the number of proxies in front (e.g. 1) or their addresses/subnets (e.g. loopback, 10.0.0.0/8)';
const TRUST_PROXY_MESSAGE = 'must be false, a number of proxy hops (e.g. 1), or a comma-separated list of proxy addresses/subnets (e.g. loopback, 10.0.0.0/8)';

/** A list Express's `trust proxy` (proxy-addr) accepts: addresses, subnets, or the names loopback, linklocal, uniquelocal. */
function isProxyList(value: string): boolean {
  try {
    compileProxyList(value.split(',').map((part) => part.trim()));
    return true;
  } catch {
    return false;
  }
}

const booleanFlag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

const RESPONSE_VALIDATION_MESSAGE = 'must be true, false or a fraction from 0 to 1 (e.g. 0.01)';

/**
 * `true`/`false`: every response validated inline, or none; a decimal from 0
 * to 1: that share checked after it is sent. A number is always a fraction
 * (`1` every response, `0` none), no longer a boolean alias.
 */
const responseValidation = z
  .string()
  .regex(/^(true|false|\d+(\.\d+)?|\.\d+)$/, RESPONSE_VALIDATION_MESSAGE)
  .transform((value): boolean | number => (value === 'true' ? true : value === 'false' ? false : Number(value)))
  .refine((value) => typeof value === 'boolean' || value <= 1, RESPONSE_VALIDATION_MESSAGE);

const environmentSchema = z
  .object({
    PORT: z
      .string()
      .regex(/^\d{1,5}$/, 'must be an integer from 0 to 65535')
      .transform(Number)
      .refine((port) => port <= 65535, 'must be an integer from 0 to 65535')
      .default(3000),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: z
      .string()
      .regex(/^(sqlite:.+|postgres(ql)?:\/\/.+)/, 'must be sqlite:PATH or postgres://user:password@host/database')
      .default(DEFAULT_DATABASE_URL),
    /** Shared rate-limit counters, bans and key-change signal; unset means in memory (one instance). */
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\/.+/, 'must be redis://host:port or rediss://host:port')
      .optional(),
    REDIS_KEY_PREFIX: z.string().min(1).default('pas:'),
    LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
    /** `pretty` for people at a terminal (needs the dev dependency pino-pretty); JSON otherwise. */
    LOG_FORMAT: z
      .enum(['json', 'pretty'])
      .default('json')
      .refine((format) => format === 'json' || canLoad('pino-pretty'), {
        message: 'pretty needs pino-pretty, a dev dependency that is not installed (npm install without --omit=dev), or use json',
      }),
    /** Bearer token for GET /metrics; unset: loopback clients only in development and test, disabled in production. */
    METRICS_TOKEN: z
      .string()
      .min(16, 'must be at least 16 characters (e.g. openssl rand -hex 32)')
      .max(256, 'must be at most 256 characters')
      .regex(/^[\x21-\x7E]+$/, 'must be printable ASCII without spaces')
      .optional(),
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    /** Response validation: inline (`true`) by default except in production, where a fraction (0.01) is checked after sending. */
    VALIDATE_RESPONSES: responseValidation.optional(),
    /**
     * Mock mode (npm run mock): `true`, stubbed operations answer with an example of the contract instead of 501;
     * `stateful` (npm run mock -- --stateful), every operation is answered by the mock, collection/item pairs from memory.
     */
    MOCK_RESPONSES: z
      .enum(['true', 'false', '1', '0', 'stateful'], { error: 'must be true, false or stateful' })
      .transform((value): boolean | 'stateful' => (value === 'stateful' ? value : value === 'true' || value === '1'))
      .default(false),
    RATE_LIMIT_BAN_AFTER: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(10),
    RATE_LIMIT_BAN_SECONDS: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(900),
    RATE_LIMIT_IP_PER_MINUTE: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(60),
    /**
     * Express `trust proxy`: `false`, a hop count, or a comma-separated list of
     * proxy addresses/subnets. `true` is refused: it would take the client's
     * address from whatever the client writes first in X-Forwarded-For.
     */
    TRUST_PROXY: z
      .string()
      .default('false')
      .refine((value) => value !== 'true', TRUST_PROXY_TRUE_MESSAGE)
      .refine((value) => value === 'false' || /^\d+$/.test(value) || isProxyList(value), TRUST_PROXY_MESSAGE)
      .transform((value): false | number | string => (value === 'false' ? false : /^\d+$/.test(value) ? Number(value) : value)),
    /** Seconds to wait for in-flight requests on SIGTERM before closing connections. */
    SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(10),
    /** Slow clients (src/runtime/http-server.ts): time to send the request headers, the whole request, and idle keep-alive time. */
    HEADERS_TIMEOUT_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(10),
    REQUEST_TIMEOUT_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(20),
    KEEP_ALIVE_TIMEOUT_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(5),
    /** Streams (sequential media types): the idle time after which an SSE stream sends a heartbeat comment, and how long a client may leave a full socket unread. */
    STREAM_HEARTBEAT_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(15),
    STREAM_STALL_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(30),
    /** The largest request body sent as a stream of items (JSON Lines, JSON text sequences), in MiB; each item is held to the 1 MiB body limit. */
    STREAM_REQUEST_MAX_MIB: z.coerce.number({ error: 'must be a number of MiB' }).positive().default(100),
    /** The most items a request body sent as a stream may hold, when its schema sets no `maxItems`. */
    STREAM_REQUEST_MAX_ITEMS: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(10_000),
    /** The longest a streamed answer may last before it is cut. */
    STREAM_MAX_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).positive().default(300),
    /** Streams (request bodies of items and streamed answers) one caller may have open at once, and this process in all. */
    STREAM_MAX_PER_CALLER: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(2),
    STREAM_MAX_PER_PROCESS: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(16),
    /** The items a stream sends or receives that count as one more request of its caller. */
    STREAM_ITEMS_PER_REQUEST: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(1_000),
    /** A folder laid out as openapi/ to serve the contract from instead (npm run dev points it at its last good copy). */
    OPENAPI_DIR: z
      .string()
      .refine((dir) => existsSync(path.join(dir, 'v1', 'openapi.yaml')), 'must be a folder laid out as openapi/ (v1/openapi.yaml, ...)')
      .transform((dir) => path.resolve(dir))
      .optional(),
    /** How long an Idempotency-Key and its stored response are kept (createPet). */
    IDEMPOTENCY_RETENTION_HOURS: z.coerce.number({ error: 'must be a number of hours' }).positive().default(24),
    /** Server processes (node:cluster) sharing the port, the database and the rate-limit counts; `auto` = one per available core. */
    WORKERS: z
      .string()
      .regex(/^(auto|\d{1,3})$/, 'must be a positive integer or auto')
      .transform((value) => (value === 'auto' ? availableParallelism() : Number(value)))
      .refine((workers) => workers >= 1 && workers <= MAX_WORKERS, `must be from 1 to ${MAX_WORKERS}, or auto`)
      .default(1),
    /** The JSON Web Key Set that access tokens of oauth2 and openIdConnect schemes are verified against; unset: such requirements answer 401 saying so. */
    OAUTH2_JWKS_URL: z
      .string()
      .url('must be an http(s) URL of a JSON Web Key Set')
      .refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL of a JSON Web Key Set')
      .optional(),
    /** The `iss` every access token must carry: required with OAUTH2_JWKS_URL. */
    OAUTH2_ISSUER: z.string().min(1).optional(),
    /** An `aud` every access token must carry: required with OAUTH2_JWKS_URL. */
    OAUTH2_AUDIENCE: z.string().min(1).optional(),
    /** Tests only: verify tokens without checking their issuer and audience (refused in production). */
    OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE: booleanFlag.default(false),
    /** The oldest token accepted, by its `iat`, whatever its `exp` says. */
    OAUTH2_MAX_TOKEN_AGE_SECONDS: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(86_400),
    /** The JWT `typ` every token must carry (`at+jwt` where the provider follows RFC 9068, which keeps ID tokens out); unset: not checked. */
    OAUTH2_TOKEN_TYPE: z.string().min(1).optional(),
    /** The plan (rate limits) of every caller that presents an access token. */
    OAUTH2_PLAN: z.enum(['free', 'pro', 'business']).default('free'),
    /** Concurrent sockets per process; the excess is closed at once. */
    MAX_CONNECTIONS: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(1024),
    /** Concurrent sockets per process from one peer address (an IPv6 peer by its /56); the excess is closed at once. */
    MAX_CONNECTIONS_PER_CLIENT: z.coerce.number({ error: 'must be a positive integer' }).int().positive().default(128),
  })
  .refine((values) => values.HEADERS_TIMEOUT_SECONDS <= values.REQUEST_TIMEOUT_SECONDS, {
    // Node refuses a headers timeout longer than the request timeout (which includes the headers).
    path: ['HEADERS_TIMEOUT_SECONDS'],
    message: 'must not be greater than REQUEST_TIMEOUT_SECONDS (the request timeout includes the headers)',
  })
  .refine(
    (values) =>
      values.OAUTH2_JWKS_URL === undefined ||
      values.OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE ||
      (values.OAUTH2_ISSUER !== undefined && values.OAUTH2_AUDIENCE !== undefined),
    {
      // Without both, a token the same provider issued for another API, or by another tenant, would be accepted.
      path: ['OAUTH2_JWKS_URL'],
      message: 'verifies access tokens, so OAUTH2_ISSUER and OAUTH2_AUDIENCE must both be set (the iss and aud this API accepts)',
    },
  )
  .refine((values) => !(values.OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE && values.NODE_ENV === 'production'), {
    path: ['OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE'],
    message: 'is for tests: it is refused in production (set OAUTH2_ISSUER and OAUTH2_AUDIENCE)',
  });

/** Every environment variable the server reads (docs/operations.md documents each). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.freeze(Object.keys(environmentSchema.shape));

/** Settings that are not environment variables: fixed in production, shortened by tests. */
export const FIXED_SETTINGS = {
  /** How long a key lookup is cached: a revoked key stops working within this time. */
  keyCacheTtlMs: 2_000,
  /** Rate-limit window lengths (the plans count per minute and per day). */
  minuteWindowMs: 60_000,
  dayWindowMs: 86_400_000,
  /** The window of requests without a valid key, counted per client IP (RATE_LIMIT_IP_PER_MINUTE per window). */
  ipWindowMs: 60_000,
  /** How long a create holds its Idempotency-Key before a retry may take over (its instance died). */
  idempotencyLockMs: 30_000,
};

/** Share of responses checked after sending in production when VALIDATE_RESPONSES is unset. */
const PRODUCTION_SAMPLE_RATE = 0.01;

/** The environment read once, as the service uses it. */
const configSchema = environmentSchema.transform((values) => {
  const responseValidation = values.VALIDATE_RESPONSES ?? (values.NODE_ENV === 'production' ? PRODUCTION_SAMPLE_RATE : true);
  return {
    port: values.PORT,
    host: values.HOST,
    databaseUrl: values.DATABASE_URL,
    redisUrl: values.REDIS_URL,
    redisKeyPrefix: values.REDIS_KEY_PREFIX,
    logLevel: values.LOG_LEVEL,
    logFormat: values.LOG_FORMAT,
    /** Who may read GET /metrics: holders of the token; else, outside production, clients on this machine (a loopback peer) only. */
    metricsAccess: values.METRICS_TOKEN ? { token: values.METRICS_TOKEN } : values.NODE_ENV === 'production' ? ('disabled' as const) : ('loopback' as const),
    nodeEnv: values.NODE_ENV,
    /** Strict: every handler response goes through the validator before it is sent (a drift answers 500). */
    validateResponses: responseValidation === true,
    /** Share of responses checked against the contract after they are sent (counted and logged, never changed); 0 when strict. */
    responseSampleRate: typeof responseValidation === 'number' ? responseValidation : 0,
    /** `true`: stubs answer examples; `stateful`: every operation is answered by the mock, handlers never called (packages/engine/README.md). */
    mockResponses: values.MOCK_RESPONSES,
    /** Where the contract documents are read from (openapi/ when unset). */
    contractDir: values.OPENAPI_DIR,
    /** One line per request at info level. */
    accessLog: true,
    keyCacheTtlMs: FIXED_SETTINGS.keyCacheTtlMs,
    idempotency: {
      retentionMs: values.IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
      lockMs: FIXED_SETTINGS.idempotencyLockMs,
    },
    shutdownTimeoutMs: values.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    /** Streamed answers (packages/engine/src/response/sequential.ts). */
    streams: {
      heartbeatMs: values.STREAM_HEARTBEAT_SECONDS * 1000,
      stallMs: values.STREAM_STALL_SECONDS * 1000,
      maxDurationMs: values.STREAM_MAX_SECONDS * 1000,
      maxRequestBytes: Math.floor(values.STREAM_REQUEST_MAX_MIB * 1_048_576),
      maxRequestItems: values.STREAM_REQUEST_MAX_ITEMS,
      perCaller: values.STREAM_MAX_PER_CALLER,
      perProcess: values.STREAM_MAX_PER_PROCESS,
      itemsPerRequest: values.STREAM_ITEMS_PER_REQUEST,
    },
    rateLimits: {
      banAfter: values.RATE_LIMIT_BAN_AFTER,
      banSeconds: values.RATE_LIMIT_BAN_SECONDS,
      ipPerMinute: values.RATE_LIMIT_IP_PER_MINUTE,
      minuteWindowMs: FIXED_SETTINGS.minuteWindowMs,
      dayWindowMs: FIXED_SETTINGS.dayWindowMs,
      ipWindowMs: FIXED_SETTINGS.ipWindowMs,
    },
    trustProxy: values.TRUST_PROXY,
    /** Access tokens (oauth2 and openIdConnect schemes): where their keys are, what they must say, the plan of their callers. */
    oauth2: {
      jwksUrl: values.OAUTH2_JWKS_URL,
      issuer: values.OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE ? undefined : values.OAUTH2_ISSUER,
      audience: values.OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE ? undefined : values.OAUTH2_AUDIENCE,
      maxTokenAgeSeconds: values.OAUTH2_MAX_TOKEN_AGE_SECONDS,
      tokenType: values.OAUTH2_TOKEN_TYPE,
      plan: values.OAUTH2_PLAN,
      acceptAnyIssuerAndAudience: values.OAUTH2_ACCEPT_ANY_ISSUER_AND_AUDIENCE,
    },
    /** Server processes; above 1 the entry point runs a node:cluster primary (src/runtime/cluster.ts). */
    workers: values.WORKERS,
    httpLimits: {
      headersTimeoutMs: values.HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: values.REQUEST_TIMEOUT_SECONDS * 1000,
      keepAliveTimeoutMs: values.KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
      maxConnections: values.MAX_CONNECTIONS,
      maxConnectionsPerClient: values.MAX_CONNECTIONS_PER_CLIENT,
    },
  };
});

/** The service's configuration: derived from the schema, never restated. */
export type Config = DeepReadonly<z.output<typeof configSchema>>;
export type LogFormat = Config['logFormat'];
/** Plan enforcement settings (banAfter, banSeconds, ipPerMinute, window lengths), as configured. */
export type RateLimitSettings = Config['rateLimits'];

type DeepReadonly<T> = T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/**
 * Reads and validates the configuration once at start; the result is deeply
 * frozen. Throws a message naming every bad variable.
 *
 * @example const config = loadConfig(process.env);
 */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = configSchema.safeParse(
    // An empty variable means "not set", as in most shells' `VAR= cmd`.
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')),
  );
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid configuration:\n${problems.join('\n')}`);
  }
  return deepFreeze(parsed.data);
}

/**
 * The environment with what the server's command line adds: `--stateful`
 * (`npm run mock -- --stateful`, which npm appends to the node command) is
 * MOCK_RESPONSES=stateful.
 *
 * @example loadConfig(withArguments(process.env, process.argv.slice(2)))
 */
export function withArguments(env: NodeJS.ProcessEnv, args: readonly string[]): NodeJS.ProcessEnv {
  return args.includes('--stateful') ? { ...env, MOCK_RESPONSES: 'stateful' } : env;
}

/**
 * A configuration with some settings changed (tests, benchmarks): the result is frozen too.
 *
 * @example const fast = withSettings(config, { rateLimits: { ...config.rateLimits, minuteWindowMs: 2_000 } });
 */
export function withSettings(config: Config, changes: Partial<Config>): Config {
  return deepFreeze(structuredClone({ ...config, ...changes }) as z.output<typeof configSchema>);
}

function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value as DeepReadonly<T>;
}

/** Whether an optional module (a dev dependency) is installed. */
function canLoad(module: string): boolean {
  try {
    require.resolve(module);
    return true;
  } catch {
    return false;
  }
}
