/**
 * Reading a V8 CPU profile of the project's server (`node --cpu-prof`): the
 * profile of one scenario under load, and where its samples went, by
 * function, by library, by owner (the innermost package or src/ frame), by
 * request stage and by layer of the request (the cost ledger, bench/ledger.ts).
 * Everything is measured from outside the product: the server runs as it
 * ships, with Node's profiler on.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ROOT,
  ServerProcess,
  killAllServers,
  load,
  loadProblem,
  peerSpec,
  probe,
  projectSpec,
  type LoadResult,
  type PeerId,
  type ProjectDatabase,
  type Scenario,
} from './lib';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const SPECIAL = new Set(['(program)', '(idle)', '(garbage collector)', '(root)']);

/** Which library, part of Node or part of src/ a frame belongs to. */
function categoryOf(frame: CallFrame): { name: string; userland: boolean } {
  const { url, functionName } = frame;
  if (!url) return { name: SPECIAL.has(functionName) ? functionName : '(V8 builtins / native)', userland: false };
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    return { name: first!.startsWith('@') ? `${first}/${second}` : first!, userland: true };
  }
  if (url.startsWith('node:')) {
    const rest = url.slice('node:'.length);
    const parts = rest.split('/');
    return { name: `node:${parts[0] === 'internal' && parts.length > 2 ? `internal/${parts[1]}` : rest}`, userland: false };
  }
  const file = compiledFile(url);
  if (file !== undefined) {
    const parts = file.split('/');
    return { name: `src/${parts.length > 1 ? parts[0] : parts[0]!.replace(/\.js$/, '')}`, userland: true };
  }
  return { name: url.replace(/^file:\/\//, '').replace(`${ROOT}/`, ''), userland: true };
}

/**
 * A frame's file, as the project's code names it: the store's under dist/src/
 * (`service/keys/key-check.js`), the engine package's under its dist/
 * (`engine/security/authenticate.js`); undefined for any other file.
 */
function compiledFile(url: string): string | undefined {
  const store = url.indexOf('/dist/src/');
  if (store !== -1) return url.slice(store + '/dist/src/'.length);
  const engine = url.indexOf('/packages/engine/dist/');
  return engine === -1 ? undefined : `engine/${url.slice(engine + '/packages/engine/dist/'.length)}`;
}

function location(frame: CallFrame): string {
  if (!frame.url) return '';
  const modules = frame.url.lastIndexOf('/node_modules/');
  const short = modules !== -1 ? frame.url.slice(modules + '/node_modules/'.length) : frame.url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
  return `${short}:${frame.lineNumber + 1}`;
}

export interface ProfileSummary {
  windowMs: number;
  busyMs: number;
  idleMs: number;
  gcMs: number;
  functions: Array<{ name: string; where: string; category: string; selfMs: number; busyShare: number }>;
  categories: Array<{ category: string; selfMs: number; busyShare: number }>;
  owners: Array<{ owner: string; ms: number; busyShare: number }>;
  stages: Array<{ stage: string; ms: number; busyShare: number }>;
}

const isLayerCall = (frame: CallFrame): boolean => frame.functionName === 'handleRequest' && /\/router\/lib\/layer\.js$/.test(frame.url);

/**
 * Which stage of the request a sample belongs to: the middleware or handler
 * the Express router is running (the innermost function a router layer
 * called: its own synchronous work, not what runs after its next()); for code
 * resumed after an await (Express 5 middleware and handlers are async), the
 * function that resumed; otherwise the Node core entry point.
 */
function stageOf(chain: CallFrame[]): string {
  for (let index = 0; index + 1 < chain.length; index++) {
    if (isLayerCall(chain[index + 1]!)) {
      const frame = chain[index]!;
      return `layer ${frame.functionName || '(anonymous)'} (${location(frame)})`;
    }
  }
  for (let index = chain.length - 1; index >= 0; index--) {
    const frame = chain[index]!;
    if (categoryOf(frame).userland) return `resumed ${frame.functionName || '(anonymous)'} (${location(frame)})`;
  }
  const entry = chain[chain.length - 2] ?? chain[0]!;
  return `node ${entry.functionName || '(anonymous)'}${entry.url ? ` (${location(entry)})` : ''}`;
}

/**
 * Self time per function and per library, and "owner" time: each sample is
 * charged to the innermost frame that belongs to a package or to src/ (so
 * JSON.stringify called by res.json is Express's, a SHA-256 called by
 * src/service/keys is src/service/keys'). Only samples within [fromUs, toUs] count.
 */
export function summarise(profile: CpuProfile, fromUs = -Infinity, toUs = Infinity, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const selfUs = new Map<number, number>();
  let timestamp = profile.startTime;
  let windowUs = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    timestamp += profile.timeDeltas[index] ?? 0;
    const duration = profile.timeDeltas[index + 1] ?? 0;
    if (timestamp < fromUs || timestamp > toUs) continue;
    windowUs += duration;
    const id = profile.samples[index]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + duration);
  }

  const functions = new Map<string, { name: string; where: string; category: string; us: number }>();
  const categories = new Map<string, number>();
  const owners = new Map<string, number>();
  const stages = new Map<string, number>();
  let idleUs = 0;
  let gcUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    if (frame.functionName === '(garbage collector)') gcUs += us;
    const category = categoryOf(frame).name;
    const key = `${frame.functionName}@${frame.url}:${frame.lineNumber}:${frame.columnNumber}`;
    const entry = functions.get(key) ?? { name: frame.functionName || '(anonymous)', where: location(frame), category, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    categories.set(category, (categories.get(category) ?? 0) + us);

    const chain: CallFrame[] = [];
    for (let walk: number | undefined = id; walk !== undefined; walk = parent.get(walk)) chain.push(byId.get(walk)!.callFrame);
    const owner = chain.map((candidate) => categoryOf(candidate)).find((candidate) => candidate.userland)?.name ?? category;
    owners.set(owner, (owners.get(owner) ?? 0) + us);
    const stage = stageOf(chain);
    stages.set(stage, (stages.get(stage) ?? 0) + us);
  }
  const busyUs = windowUs - idleUs;
  const share = (us: number): number => (busyUs > 0 ? us / busyUs : 0);
  const ms = (us: number): number => Math.round(us / 100) / 10;
  return {
    windowMs: ms(windowUs),
    busyMs: ms(busyUs),
    idleMs: ms(idleUs),
    gcMs: ms(gcUs),
    functions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map(({ name, where, category, us }) => ({ name, where, category, selfMs: ms(us), busyShare: share(us) })),
    categories: [...categories.entries()].sort((a, b) => b[1] - a[1]).map(([category, us]) => ({ category, selfMs: ms(us), busyShare: share(us) })),
    owners: [...owners.entries()].sort((a, b) => b[1] - a[1]).map(([owner, us]) => ({ owner, ms: ms(us), busyShare: share(us) })),
    stages: [...stages.entries()].sort((a, b) => b[1] - a[1]).map(([stage, us]) => ({ stage, ms: ms(us), busyShare: share(us) })),
  };
}

/** A profile of the project's server under one scenario, and the load window within it (the profile's clock). */
export interface ProfiledLoad {
  profile: CpuProfile;
  fromUs: number;
  toUs: number;
  load: LoadResult;
  /** The .cpuprofile file (outside the repository). */
  file: string;
}

/**
 * Starts the project's server (as shipped, plus `--cpu-prof`), warms it up,
 * loads one scenario for `seconds` and reads the profile it writes when it
 * stops. The .cpuprofile goes to `dir` (a new folder under the OS temp dir by
 * default), never inside the repository.
 *
 * @example const { profile, fromUs, toUs } = await profileUnderLoad(database, SCENARIOS.list20, { seconds: 5, warmup: 2 });
 */
export async function profileUnderLoad(
  database: ProjectDatabase,
  scenario: Scenario,
  {
    seconds,
    warmup,
    connections = 32,
    dir,
    peer,
  }: { seconds: number; warmup: number; connections?: number; dir?: string /** Profile this peer instead of the project. */; peer?: PeerId },
): Promise<ProfiledLoad> {
  const folder = path.resolve(dir ?? mkdtempSync(path.join(os.tmpdir(), 'pet-bench-profile-')));
  if (folder === ROOT || folder.startsWith(ROOT + path.sep)) throw new Error(`keep .cpuprofile files out of the repository: ${folder}`);
  const file = path.join(folder, `${peer ?? 'project'}-${scenario.id}-${Date.now()}.cpuprofile`);
  const profilerFlags = ['--cpu-prof', `--cpu-prof-dir=${folder}`, `--cpu-prof-name=${path.basename(file)}`];
  let spec = projectSpec(`profile-${scenario.id}`, 'project (--cpu-prof)', database, profilerFlags);
  if (peer) {
    const peerServer = peerSpec(peer, database);
    spec = { ...peerServer, args: [...profilerFlags, ...peerServer.args] };
  }
  const server = await ServerProcess.start(spec);
  let fromUs = 0;
  let toUs = 0;
  let result: LoadResult;
  try {
    await probe(server, scenario, database.key);
    if (warmup > 0) await load(server, scenario, database.key, warmup, connections);
    fromUs = Number(process.hrtime.bigint() / 1000n);
    result = await load(server, scenario, database.key, seconds, connections);
    toUs = Number(process.hrtime.bigint() / 1000n);
    const problem = loadProblem(result, scenario);
    if (problem) throw new Error(`${scenario.label} under --cpu-prof: ${problem}`);
  } finally {
    await server.stop(); // graceful exit: node writes the profile
  }
  return { profile: JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, fromUs, toUs, load: result, file };
}

/** Removes a profile's folder when it was made for it. */
export function discardProfile(profiled: ProfiledLoad): void {
  rmSync(path.dirname(profiled.file), { recursive: true, force: true });
}

export { killAllServers };

/**
 * The layers of a request the cost ledger reports, and which code is each
 * one's: a src/ file (under dist/src/) or a package. A sample is charged to
 * the innermost frame that belongs to a layer; Node's HTTP and socket code
 * (the response leaving through the kernel) is "the rest", other Node core
 * and V8 builtins (JSON.stringify, a SHA-256, a file write) go to the frame
 * that called them.
 */
export const LAYER_CODE = [
  {
    layer: 'access-log',
    src: ['observability/logger.js'],
    packages: [
      'pino',
      'sonic-boom',
      'quick-format-unescaped',
      'fast-redact',
      'pino-std-serializers',
      'on-exit-leak-free',
      'atomic-sleep',
      'safe-stable-stringify',
    ],
  },
  {
    layer: 'response-sampling',
    src: ['engine/pipeline/response-sampling.js', 'observability/engine-hooks.js', 'engine/contract/response-conformance.js'],
    packages: [],
  },
  { layer: 'observability', src: ['observability/'], packages: ['prom-client', 'tdigest', 'bintrees'] },
  { layer: 'security-headers', src: ['engine/pipeline/security-headers.js'], packages: ['helmet'] },
  { layer: 'routing', src: ['engine/contract/route-table.js', 'engine/pipeline/operation-pipeline.js'], packages: [] },
  { layer: 'authentication', src: ['engine/security/', 'service/keys/'], packages: ['lru-cache', 'jose'] },
  { layer: 'rate-limiting', src: ['service/rate-limit/', 'service/shared-state/'], packages: ['express-rate-limit', 'rate-limit-redis', 'ioredis'] },
  {
    layer: 'parameters',
    src: ['engine/request/parameters.js', 'engine/request/styles.js', 'engine/request/cookies.js', 'engine/request/url-length.js'],
    packages: [],
  },
  {
    layer: 'body-parsing',
    src: ['engine/request/body.js', 'engine/request/form-fields.js'],
    packages: ['body-parser', 'raw-body', 'multer', 'busboy', 'iconv-lite', 'content-type', 'type-is'],
  },
  {
    layer: 'validation',
    src: ['engine/request/validator.js', 'engine/contract/schemas.js', 'engine/contract/formats.js', 'engine/errors/validation-issues.js'],
    packages: ['express-openapi-validator', 'ajv', 'ajv-formats', 'ajv-draft-04'],
  },
  {
    layer: 'handler',
    src: ['service/handlers/', 'service/storage/', 'service/paging/', 'service/idempotency/', 'engine/pipeline/respond.js'],
    packages: ['kysely', 'better-sqlite3', 'pg', 'pg-protocol'],
  },
  { layer: 'serialization', src: ['engine/response/', 'engine/pipeline/error-response.js', 'engine/errors/'], packages: [] },
] as const;

export type Layer = (typeof LAYER_CODE)[number]['layer'];
export const LAYERS: readonly Layer[] = LAYER_CODE.map((entry) => entry.layer);

/** "the rest": Node's HTTP parser and socket writes, Express and its router, GC, V8's own work. */
export const REST = 'the rest' as const;

/** Node core modules whose samples are the request's way in and out (the HTTP parser, the socket), not the caller's. */
const TRANSPORT = /^node:(net|_http_\w+|internal\/stream_base_commons|internal\/streams\/\w+)$/;

function layerOfFrame(frame: CallFrame): Layer | typeof REST | undefined {
  const { url } = frame;
  if (!url) return frame.functionName === '(garbage collector)' || frame.functionName === '(program)' ? REST : undefined;
  if (url.startsWith('node:')) return TRANSPORT.test(url) ? REST : undefined;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    const name = first!.startsWith('@') ? `${first}/${second}` : first!;
    return LAYER_CODE.find((entry) => (entry.packages as readonly string[]).includes(name))?.layer ?? REST;
  }
  const file = compiledFile(url);
  if (file === undefined) return REST;
  return LAYER_CODE.find((entry) => entry.src.some((prefix) => file.startsWith(prefix)))?.layer ?? REST;
}

/**
 * Busy CPU time of the load window per layer (µs), each sample charged as
 * LAYER_CODE says; idle samples are left out.
 *
 * @example const { busyUs, byLayer } = layerTimes(profile, fromUs, toUs); byLayer.get('validation') / busyUs
 */
export function layerTimes(profile: CpuProfile, fromUs: number, toUs: number): { busyUs: number; byLayer: Map<Layer | typeof REST, number> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const layerOfNode = new Map<number, Layer | typeof REST>();
  const resolve = (id: number): Layer | typeof REST => {
    const known = layerOfNode.get(id);
    if (known) return known;
    let layer: Layer | typeof REST = REST;
    for (let walk: number | undefined = id; walk !== undefined; walk = parent.get(walk)) {
      const found = layerOfFrame(byId.get(walk)!.callFrame);
      if (found) {
        layer = found;
        break;
      }
    }
    layerOfNode.set(id, layer);
    return layer;
  };
  const byLayer = new Map<Layer | typeof REST, number>();
  let busyUs = 0;
  let timestamp = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    timestamp += profile.timeDeltas[index] ?? 0;
    const duration = profile.timeDeltas[index + 1] ?? 0;
    if (timestamp < fromUs || timestamp > toUs) continue;
    const id = profile.samples[index]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    busyUs += duration;
    const layer = resolve(id);
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + duration);
  }
  return { busyUs, byLayer };
}
