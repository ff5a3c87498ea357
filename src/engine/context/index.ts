/**
 * The public surface of the engine's `context` part: what the phases of one
 * request tell each other. Code outside src/engine imports this part from
 * here, never from one of its files (test/layout.test.ts checks it).
 *
 * @example const { caller } = contextOf(req);
 */
export { contextOf, RequestContext } from './request-context';
export type { OutgoingResponse, Principal, ReceivedBody, RequestParameters } from './request-context';
export { ResponseHeaders, writeRecordedHeaders, type HeaderValue } from './response-headers';
