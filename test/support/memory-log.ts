import { Writable } from 'node:stream';

/**
 * A log destination that keeps everything in memory, for tests that read
 * what an app logged (one JSON object per line).
 *
 * @example const log = memoryLog(); const logger = createLogger('info', log.sink); ... log.text()
 */
export function memoryLog(): { sink: Writable; text: () => string } {
  let logged = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  return { sink, text: () => logged };
}

/**
 * The access-log line of one request, found by its id among the JSON lines an
 * app logged; undefined when there is none.
 *
 * @example expect(accessLineOf(t.logs(), res.headers['x-request-id'])).toMatchObject({ status: 401, reason: 'unauthorized' });
 */
export function accessLineOf(logged: string, requestId: string | undefined): Record<string, unknown> | undefined {
  return logged
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry['msg'] === 'request' && entry['requestId'] === requestId);
}
