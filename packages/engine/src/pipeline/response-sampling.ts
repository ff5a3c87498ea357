import type { Request, Response } from 'express';
import type { SentResponse } from '../contract/response-conformance';
import type { Stage } from '../stage/stage';
import { contextOf } from '../context/request-context';
import type { EngineLogger } from './error-response';

export interface ResponseSamplingOptions {
  /** The share of requests whose response is checked, above 0 and up to 1. */
  rate: number;
  /** What is done with a sampled response once it is sent: called off the request path. */
  check: (req: Request, response: SentResponse) => void;
  /** Where a check that throws is reported. */
  logger: EngineLogger;
  /** Draws in [0, 1), one per request; `Math.random` by default. */
  random?: () => number;
}

/**
 * A body longer than this is not kept, and its response not checked: the
 * contract's answers are small, and a sample must not hold a download (the
 * docs' assets) in memory.
 */
const MAX_KEPT_BYTES = 1_048_576;

/**
 * The sampling of responses for a check after they are sent (VALIDATE_RESPONSES
 * as a fraction), as a stage of the observe phase: one draw per request, and
 * only for a sampled request anything more. There the bytes written are
 * kept (whatever wrote them: a handler's answer, the error mapper's Error
 * object), and once the response is finished the check runs in a
 * `setImmediate`, so it never delays or changes the answer. What is checked
 * is what the client got: the status, the headers and the body as sent. A
 * check that throws is logged, never thrown. Compose it only when the rate
 * is above 0: at 0 nothing is added to the pipeline.
 *
 * @example const sample = responseSampler({ rate: 0.01, check: (req, sent) => report(req, sent), logger });
 */
export function responseSampler({ rate, check, logger, random = Math.random }: ResponseSamplingOptions): Stage {
  return (req, res) => {
    if (random() >= rate) return;
    // A stream's items are checked as they are sent (its body is not kept whole).
    contextOf(req).sampled = true;
    const sentText = keepBody(res);
    res.once('finish', () => {
      setImmediate(() => {
        try {
          const text = req.method === 'HEAD' ? '' : sentText();
          if (text === undefined) return;
          // The headers the engine recorded and wrote with the status, over any Express set on the response itself.
          const headers = { ...res.getHeaders(), ...contextOf(req).responseHeaders.toObject() };
          check(req, { method: req.method, status: res.statusCode, headers, body: parsedJson(headers['content-type'], text), text });
        } catch (error) {
          logger.error({ err: error, requestId: req.id }, 'the check of a sampled response failed');
        }
      });
    });
  };
}

/**
 * Keeps what is written to this one response (its `write` and `end`
 * wrapped): the body text as sent, or undefined when it was too long to keep.
 */
function keepBody(res: Response): () => string | undefined {
  const chunks: Buffer[] = [];
  let length = 0;
  const keep = (chunk: unknown, encoding: unknown): void => {
    if (length > MAX_KEPT_BYTES || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const bytes =
      typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
    length += bytes.length;
    chunks.push(bytes);
  };
  const { write, end } = res;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return Reflect.apply(write, res, [chunk, ...rest]);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return Reflect.apply(end, res, [chunk, ...rest]);
  }) as Response['end'];
  return () => (length > MAX_KEPT_BYTES ? undefined : Buffer.concat(chunks).toString('utf8'));
}

/** The body as the client would parse it: JSON when it says so and is; else undefined. */
function parsedJson(contentType: unknown, text: string): unknown {
  if (text === '' || !String(contentType).startsWith('application/json')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
