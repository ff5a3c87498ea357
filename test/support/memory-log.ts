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
