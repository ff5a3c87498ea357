import v8 from 'node:v8';
import vm from 'node:vm';

/** The heap after full collections, in MB (gc exposed at run time, as jest does not start node with --expose-gc). */
export function heapAfterGcMb(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}
