// Preloaded into a server under test (`--expose-gc --require`, see
// HEAP_PROBE_NODE_ARGS in heap.ts): on SIGUSR2 it collects garbage fully and
// prints the heap still in use, so a test can measure the server's live heap
// between loads (serverHeapAfterGcMb).
if (typeof globalThis.gc !== 'function') throw new Error('heap-probe.cjs needs --expose-gc');
process.on('SIGUSR2', () => {
  // Twice: the first collection may only run finalizers that free more.
  globalThis.gc();
  globalThis.gc();
  process.stderr.write(`heap-probe: heapUsed=${process.memoryUsage().heapUsed}\n`);
});
