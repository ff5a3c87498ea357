/**
 * The public surface of the engine's `response` part. Writing a response:
 * representations by Accept, and JSON; reading a Server-Sent Event (the
 * typed client's and the fuzzer's). Code outside src/engine imports this
 * part from here, never from one of its files (test/layout.test.ts checks it).
 *
 * @example const choose = negotiation(representations(spec, op));
 */
export { headerName } from './header-name';
export { integerText } from './integer-text';
export { negotiation, representations } from './representations';
export { sendJson } from './send-json';
export { eventData, readEvent, sendItems, type ReceivedEvent, type StreamOptions } from './sequential';
