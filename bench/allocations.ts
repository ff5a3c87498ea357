/**
 * `node --import tsx bench/allocations.ts`: where the project's server
 * allocates per request, by allocation site, under load. The server runs as
 * it ships with the inspector open on 127.0.0.1; V8's sampling heap profiler
 * records the load (after a warm-up), including the objects the collector
 * has already freed.
 *
 *   --scenario list20|list100|get|create   (default list20)
 *   --seconds S                            load (default 5)
 *   --promoted                             only what outlived the young generation: the garbage
 *                                          that only a full (mark-compact) collection frees
 *   --depth N                              frames shown per site (default 4)
 *   --top N                                sites listed (default 25)
 *   --no-build                             use the existing dist/
 *
 * The bytes are sampled (one sample per 1 KiB allocated on average), so a
 * site's bytes per request are an estimate; the totals are within a few %.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SCENARIOS, SERVER_NODE_FLAGS, ServerProcess, freePort, killAllServers, load, prepareProjectDatabase, projectSpec, runCommand } from './lib';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** One call over the inspector protocol's WebSocket. */
async function inspector(port: number): Promise<{ call: (method: string, params?: object) => Promise<unknown>; close: () => void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        pending.set(++id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

const frameName = ({ functionName, url, lineNumber }: SamplingNode['callFrame']): string =>
  `${functionName || '(anonymous)'} ${url
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/dist\//, '')
    .replace(/^file:\/\//, '')}:${lineNumber + 1}`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'list20' },
      seconds: { type: 'string', default: '5' },
      promoted: { type: 'boolean', default: false },
      depth: { type: 'string', default: '4' },
      top: { type: 'string', default: '25' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  const scenario = SCENARIOS[values.scenario as keyof typeof SCENARIOS];
  if (!scenario) throw new Error(`--scenario must be one of ${Object.keys(SCENARIOS).join(', ')}`);
  if (!values['no-build']) await runCommand('npm', ['run', '--silent', 'build'], { inheritOutput: true });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-allocations-'));
  const database = await prepareProjectDatabase(scratch, 'allocations', 1000);
  const inspectPort = await freePort();
  const server = await ServerProcess.start(projectSpec('project', 'project', database, [...SERVER_NODE_FLAGS, `--inspect=127.0.0.1:${inspectPort}`]));
  try {
    await load(server, scenario, database.key, 3, 32); // warm-up
    const session = await inspector(inspectPort);
    await session.call('HeapProfiler.enable');
    await session.call('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !values.promoted,
    });
    const result = await load(server, scenario, database.key, Number(values.seconds), 32);
    const { profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
    session.close();
    const requests = result.rps * result.seconds;
    const depth = Number(values.depth);
    const sites = new Map<string, number>();
    let total = 0;
    const walk = (node: SamplingNode, stack: string[]): void => {
      const frames = [...stack, frameName(node.callFrame)];
      if (node.selfSize > 0) {
        total += node.selfSize;
        const site = frames.slice(-depth).reverse().join(' < ');
        sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
      }
      for (const child of node.children) walk(child, frames);
    };
    walk(profile.head, []);
    console.log(
      `${scenario.label}: ${Math.round(requests)} requests in ${result.seconds.toFixed(1)} s, ${(total / 1e6).toFixed(1)} MB ${values.promoted ? 'promoted to the old generation' : 'allocated'}, ` +
        `${(total / requests).toFixed(0)} bytes per request`,
    );
    for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
      console.log(`${(bytes / requests).toFixed(0).padStart(8)} B/req  ${site}`);
    }
  } finally {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  killAllServers();
  console.error(error);
  process.exit(1);
});
