import type { Request } from 'express';
import type { Stage } from './stage';

/**
 * The layers of a request, as the cost ledger (`npm run bench`, bench/ledger.ts)
 * names them. The ledger measures each one by running the real server with
 * that layer replaced by a stand-in and comparing CPU time per request.
 */
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
] as const;
export type Layer = (typeof LAYERS)[number];

/** Layers replaced by stand-ins: for measurement only (the ledger); never set by configuration. */
export type LayerBypass = ReadonlySet<Layer>;

export const NO_BYPASS: LayerBypass = new Set();

/** Parses `LEDGER_BYPASS=authentication,validation`; throws on an unknown layer name. */
export function parseLayerBypass(text: string | undefined): LayerBypass {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(LAYERS as readonly string[]).includes(name)) throw new Error(`unknown layer "${name}" (known: ${LAYERS.join(', ')})`);
  }
  return new Set(names as Layer[]);
}

/** The identity of a request for replay: the same method and URL get the same recorded result. */
export const replayKey = (req: Request): string => `${req.method} ${req.originalUrl}`;

/**
 * A stand-in for a stage whose work is a pure function of the request (as
 * the benchmark sends it: the same request over and over): the real stage
 * runs for the first request of each method and URL, `capture` records what
 * it produced, and later identical requests get it `restore`d without running
 * it. What remains is the cost of a map lookup.
 */
export function replayFirst<T>(real: Stage, capture: (req: Request) => T, restore: (req: Request, recorded: T) => void): Stage {
  const recorded = new Map<string, T>();
  return (req, res) => {
    const key = replayKey(req);
    if (recorded.has(key)) {
      restore(req, recorded.get(key)!);
      return;
    }
    const pending = real(req, res);
    if (pending === undefined) recorded.set(key, capture(req));
    else return pending.then(() => void recorded.set(key, capture(req)));
  };
}
