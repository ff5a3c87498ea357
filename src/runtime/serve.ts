import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Service } from '../compose';
import { createHttpServer } from './http-server';

/** A listening service and how to stop it. */
export interface Serving {
  readonly address: string;
  readonly port: number;
  /**
   * Stops taking requests, lets the ones in flight finish (keep-alive
   * clients are told to reconnect elsewhere), closes the connections left
   * after `config.shutdownTimeoutMs`, then the service's storage and Redis.
   */
  stop(): Promise<void>;
}

/**
 * Serves a composed service on `config.host:config.port` behind the HTTP
 * server's limits (src/runtime/http-server.ts: timeouts, connection cap,
 * malformed requests), and resolves once it listens.
 *
 * @example const serving = await serve(await compose(config)); process.on('SIGTERM', () => void serving.stop());
 */
export async function serve(service: Service): Promise<Serving> {
  const { config } = service;
  const server = createHttpServer(service.app, config.httpLimits).listen(config.port, config.host);
  let stopping = false;
  // While stopping, keep-alive clients are told to reconnect elsewhere, so
  // their sockets close after the response instead of holding shutdown open.
  const inFlight = new InFlight();
  server.on('request', (_req, res: ServerResponse) => {
    if (stopping) res.setHeader('Connection', 'close');
    const slot = inFlight.add(res);
    res.once('close', () => inFlight.remove(slot));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { address, port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    address,
    port,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        stopping = true;
        // Open Server-Sent Events streams end now (their clients reconnect elsewhere); other streams run to their end or the deadline.
        service.beginShutdown();
        for (const res of inFlight.responses()) if (!res.headersSent) res.setHeader('Connection', 'close');
        const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs).unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        // Keep-alive connections with no request in flight would hold close() open.
        server.closeIdleConnections();
      }).then(() => service.close())),
  };
}

/**
 * The responses in flight, in slots that are reused and never given back. A
 * `Set` added to and deleted from on every request grows and shrinks its table
 * as the number in flight moves, and each new table, held by a long-lived Set,
 * outlives the young generation: garbage that only a full collection (a pause
 * of every request) removes.
 */
class InFlight {
  private readonly slots: Array<ServerResponse | undefined> = [];
  private readonly free: number[] = [];

  add(res: ServerResponse): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = res;
    return slot;
  }

  remove(slot: number): void {
    this.slots[slot] = undefined;
    this.free.push(slot);
  }

  *responses(): Iterable<ServerResponse> {
    for (const res of this.slots) if (res) yield res;
  }
}
