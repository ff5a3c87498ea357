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
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    if (stopping) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
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
        for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
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
