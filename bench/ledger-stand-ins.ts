/**
 * The cost ledger's stand-ins: each layer of a request replaced by something
 * that costs (almost) nothing, so the ledger can measure the layer as the
 * full stack's CPU per request minus the stack without it. They are plugged
 * in through the composition root's phase hooks (src/pipeline/phases.ts),
 * from the benchmark's own server (bench/servers/ledger-server.ts): nothing
 * in the service can switch them on.
 *
 * A replaying stand-in runs the real phase for the first request of each
 * identity and replays what it produced for later identical requests (the
 * benchmark sends the same requests over and over). The identity is the
 * method and URL, plus the credentials for authentication (never one
 * caller's identity for another's key) and the body for body parsing.
 */
import type { Request, Response } from 'express';
import type { PhaseHooks } from '../src/engine/pipeline/phases';
import type { Stage } from '../src/engine/pipeline/stage';
import { sendJson } from '../src/engine/response/send-json';

export const LAYERS = [
  'observability',
  'security-headers',
  'authentication',
  'rate-limiting',
  'body-parsing',
  'validation',
  'routing',
  'handler',
  'serialization',
  'access-log',
  'response-sampling',
  'validate-every-response',
] as const;
export type Layer = (typeof LAYERS)[number];

/**
 * Layers measured by configuration rather than a phase hook: the server of
 * the variant starts with these variables. `adds` marks a variant that adds
 * work (its cost is the variant minus the full stack, not the other way);
 * `partOf` a layer whose cost another layer's figure already includes.
 */
export const CONFIGURED_LAYERS: Partial<Record<Layer, { env: Record<string, string>; adds?: true; partOf?: Layer }>> = {
  'access-log': { env: { LOG_LEVEL: 'warn' }, partOf: 'observability' },
  'response-sampling': { env: { VALIDATE_RESPONSES: '0' } },
  'validate-every-response': { env: { VALIDATE_RESPONSES: '1' }, adds: true },
};

/** What a stand-in does instead of the layer (printed under the ledger's table). */
export const STAND_INS: Record<Layer, string> = {
  observability: 'no request id, no duration histogram, no access-log listener',
  'security-headers': "helmet's headers not set",
  authentication: "the first request's caller (or refusal) replayed per URL and Authorization header: no header parsing, no key cache",
  'rate-limiting': 'no counting, no rate-limit headers',
  'body-parsing': "the first request's parsed body replayed per URL and body length",
  validation: "the first request's validated params, query and body (defaults applied) replayed per URL",
  routing: 'the first match replayed per URL: no path matching',
  handler: 'the first response replayed per URL: no database, no handler',
  serialization: "the first response's JSON text reused per URL: no JSON.stringify",
  'access-log': 'LOG_LEVEL=warn: no access-log line (the request id and the duration histogram stay)',
  'response-sampling': 'VALIDATE_RESPONSES=0: no response checked against the contract (the production default samples a small share)',
  'validate-every-response': 'VALIDATE_RESPONSES=1: every response checked against the contract after it is sent; the row is its cost over the default',
};

/** Parses `authentication,validation`; throws on an unknown layer name. @example parseLayers('routing') // ['routing'] */
export function parseLayers(text: string | undefined): Layer[] {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(LAYERS as readonly string[]).includes(name)) throw new Error(`unknown layer "${name}" (known: ${LAYERS.join(', ')})`);
  }
  return names as Layer[];
}

const byUrl = (req: Request): string => `${req.method} ${req.originalUrl}`;
const noop: Stage = () => undefined;

/**
 * A stand-in for a stage whose work is a pure function of the request's
 * identity: the real stage runs once per identity, `capture` records what it
 * produced, and later requests get it `restore`d.
 */
function replayFirst<T>(real: Stage, identity: (req: Request) => string, capture: (req: Request) => T, restore: (req: Request, recorded: T) => void): Stage {
  const recorded = new Map<string, T>();
  return (req, res) => {
    const key = identity(req);
    if (recorded.has(key)) {
      restore(req, recorded.get(key)!);
      return;
    }
    const pending = real(req, res);
    if (pending === undefined) recorded.set(key, capture(req));
    else return pending.then(() => void recorded.set(key, capture(req)));
  };
}

type Validated = { openapi: unknown; params: Request['params']; query: unknown; body: unknown };

/** The phase hooks that replace `layers` with their stand-ins. */
export function standInHooks(layers: readonly Layer[]): PhaseHooks {
  const hooks: { -readonly [P in keyof PhaseHooks]: PhaseHooks[P] } = {};
  for (const layer of layers) {
    switch (layer) {
      case 'observability':
        // The request id is set (the error mapper's log line reads it), nothing else.
        hooks.observe = () => (req) => void (req.id = 'ledger');
        break;
      case 'security-headers':
        hooks['security-headers'] = () => noop;
        break;
      case 'authentication':
        hooks.authenticate = (real) => (op, api) => {
          const stage = real(op, api);
          return (
            stage &&
            replayFirst(
              stage,
              (req) => `${byUrl(req)} ${req.headers.authorization ?? ''}`,
              (req) => ({ caller: req.caller, authFailure: req.authFailure }),
              (req, recorded) => Object.assign(req, recorded),
            )
          );
        };
        break;
      case 'rate-limiting':
        hooks['rate-limit'] = () => noop;
        break;
      case 'body-parsing':
        hooks.body = (real) => (op, api) => {
          const stage = real(op, api);
          return (
            stage &&
            replayFirst(
              stage,
              (req) => `${byUrl(req)} ${req.headers['content-length'] ?? ''}`,
              (req) => ({ body: req.body as unknown, received: req.received }),
              (req, recorded) => Object.assign(req, recorded),
            )
          );
        };
        break;
      case 'validation':
        hooks.parameters = (real) => (op, api) => {
          const stage = real(op, api);
          return stage && replayFirst(stage, byUrl, (req) => req.parameters, (req, parameters) => (req.parameters = parameters));
        };
        hooks.validate = (real) => (op, api) => {
          const stage = real(op, api);
          return (
            stage &&
            replayFirst<Validated>(
              stage,
              byUrl,
              (req) => ({ openapi: (req as { openapi?: unknown }).openapi, params: req.params, query: req.query, body: req.body as unknown }),
              (req, recorded) => {
                Object.assign(req, { openapi: recorded.openapi, params: recorded.params, body: recorded.body });
                Object.defineProperty(req, 'query', { value: recorded.query, writable: true, configurable: true, enumerable: true });
              },
            )
          );
        };
        break;
      case 'routing':
        hooks.route = (real) => {
          const found = new Map<string, ReturnType<typeof real>>();
          return (req) => {
            const key = byUrl(req);
            if (!found.has(key)) found.set(key, real(req));
            return found.get(key);
          };
        };
        break;
      case 'handler':
        hooks.handle = (real) => (op, api) => {
          const answers = new Map<string, Request['answer']>();
          const handle = real(op, api)!;
          return async (req: Request, res: Response) => {
            const key = byUrl(req);
            if (!answers.has(key)) {
              await handle(req, res);
              answers.set(key, req.answer);
            }
            req.answer = answers.get(key);
          };
        };
        break;
      case 'serialization':
        hooks.serialize = () => () => {
          const texts = new Map<string, string>();
          return (req: Request, res: Response) => {
            const answer = req.answer!;
            const key = byUrl(req);
            let text = texts.get(key);
            if (text === undefined && answer.body !== undefined) texts.set(key, (text = JSON.stringify(answer.body)));
            sendJson(res, answer.status, answer.body, answer.headers, text);
          };
        };
        break;
    }
  }
  return hooks;
}
