import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { RunningServer } from './processes';

/** The heap after full collections, in MB (gc exposed at run time, as jest does not start node with --expose-gc). */
export function heapAfterGcMb(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** Node flags for startServer that let serverHeapAfterGcMb measure the server process. */
export const HEAP_PROBE_NODE_ARGS = ['--expose-gc', '--require', path.join(__dirname, 'heap-probe.cjs')];

/**
 * The heap of a server started with HEAP_PROBE_NODE_ARGS after full
 * collections, in MB: it is signalled (SIGUSR2) and prints the figure. Call it
 * with no request in flight.
 */
export async function serverHeapAfterGcMb(server: RunningServer, timeoutMs = 10_000): Promise<number> {
  const from = server.output().length;
  server.child.kill('SIGUSR2');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = /heap-probe: heapUsed=(\d+)\n/.exec(server.output().slice(from));
    if (match) return Number(match[1]) / 1024 / 1024;
    if (server.child.exitCode !== null || server.child.signalCode !== null || Date.now() > deadline) {
      throw new Error(`no heap figure from the server (started with HEAP_PROBE_NODE_ARGS?):\n${server.output().slice(from)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
