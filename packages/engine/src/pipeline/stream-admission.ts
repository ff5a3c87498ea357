import type { Request } from 'express';
import { contextOf } from '../context/request-context';
import { ApiError } from '../errors/api-error';
import { declaredBody } from '../request/body';
import { representations } from '../response/representations';
import { sequentialFormat } from '../response/sequential';
import type { Stage } from '../stage/stage';
import type { PerOperation } from './phases';

/** How many streams may be open at once, and what a stream's items weigh in the rate limits. */
export interface StreamLimits {
  /** Streams (request bodies of items and streamed answers alike) one caller may have open at once. */
  perCaller: number;
  /** Streams this process serves at once, whoever the callers. */
  perProcess: number;
  /** The items (sent or received) of a stream that count as one more request of its caller. */
  itemsPerRequest: number;
}

export interface StreamAdmissionOptions {
  limits: StreamLimits;
  /** Who a request's streams count against: its caller's principal, else its client's address. */
  clientOf(req: Request): string;
  /** Counts one more request of the request's caller (a stream's weight); its failures are its own to report. */
  charge(req: Request): void;
  /** Told about each stream refused, and by which cap. */
  refused?(req: Request, scope: 'caller' | 'process'): void;
}

/** What a client refused by a cap is told to wait: streams last seconds, and a retry sooner would be refused again. */
const STREAM_RETRY_AFTER_SECONDS = 5;

/**
 * The stream-admission phase: a request that streams (its body is a stream
 * of items, or the answer it negotiated is) takes one of its caller's stream
 * slots and one of the process's until its response closes; when either is
 * taken, it is a 429 with `Retry-After`, before its handler runs or a byte
 * of its body is read. Every `itemsPerRequest` items it sends or receives
 * count as one more request of its caller, so a stream weighs in the rate
 * limits by what it carries. Other requests pass untouched.
 *
 * @example phases['stream-admission'] = streamAdmission({ limits: { perCaller: 2, perProcess: 16, itemsPerRequest: 1000 }, clientOf, charge });
 */
export function streamAdmission(options: StreamAdmissionOptions): PerOperation {
  const { limits, clientOf, charge } = options;
  const byClient = new Map<string, number>();
  let open = 0;

  const admit: Stage = (req, res) => {
    const context = contextOf(req);
    const streamsIn = context.received !== undefined && sequentialFormat(context.received.mediaType) !== undefined;
    const streamsOut = context.preferredMediaType !== undefined && sequentialFormat(context.preferredMediaType) !== undefined;
    if (!streamsIn && !streamsOut) return;
    const client = clientOf(req);
    const held = byClient.get(client) ?? 0;
    if (held >= limits.perCaller) {
      options.refused?.(req, 'caller');
      throw tooMany(`at most ${limits.perCaller} streams may be open at once per caller: retry when one has ended`);
    }
    if (open >= limits.perProcess) {
      options.refused?.(req, 'process');
      throw tooMany(`the server is serving its most streams at once (${limits.perProcess}): retry later`);
    }
    byClient.set(client, held + 1);
    open++;
    res.once('close', () => {
      open--;
      const left = byClient.get(client)! - 1;
      if (left === 0) byClient.delete(client);
      else byClient.set(client, left);
    });
    let uncounted = 0;
    context.streamItems = (items) => {
      uncounted += items;
      while (uncounted >= limits.itemsPerRequest) {
        uncounted -= limits.itemsPerRequest;
        charge(req);
      }
    };
  };

  return (op, api) => {
    if (op === undefined) return undefined;
    const streamsIn = declaredBody(api.contract, op)?.mediaTypes.some((type) => sequentialFormat(type) !== undefined) ?? false;
    return streamsIn || representations(api.contract, op).streams ? admit : undefined;
  };
}

const tooMany = (message: string): ApiError => new ApiError(429, 'rate_limited', message, { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) });
