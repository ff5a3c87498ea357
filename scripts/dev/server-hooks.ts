/**
 * Loaded into the dev server process (`node --import tsx --import
 * scripts/dev/server-hooks.ts src/server.ts`), so src/ needs nothing for `npm
 * run dev`:
 *
 * - it tells `npm run dev` when the server listens (the address), through the
 *   IPC channel, from Node's `net.server.listen` diagnostics channel: no log
 *   parsing, no polling;
 * - when `npm run dev` goes away without stopping it (killed), the channel
 *   closes and the server stops itself as on SIGTERM: never an orphan holding the port.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { AddressInfo, Server } from 'node:net';

if (process.send) {
  subscribe('tracing:net.server.listen:asyncEnd', (message) => {
    const address = (message as { server?: Server }).server?.address() as AddressInfo | null | undefined;
    // A moment later, so the server's own "listening" log line (written asynchronously) comes first.
    if (address && typeof address === 'object') setTimeout(() => process.send?.({ type: 'listening', address: address.address, port: address.port }), 10);
  });
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // The channel must not keep the process alive on its own.
  (process.channel as { unref?: () => void } | undefined)?.unref?.();
}
