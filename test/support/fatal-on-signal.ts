/**
 * The real entry point, composed as `npm start` composes it, plus one way in
 * for a test: SIGUSR2 throws an exception nothing catches, as a bug would.
 * Used by test/logs.test.ts to show the buffered log survives it.
 */
import { startServer } from '../../src/server';

process.on('SIGUSR2', () => {
  setImmediate(() => {
    throw new Error('planted failure (SIGUSR2)');
  });
});
void startServer(process.env);
