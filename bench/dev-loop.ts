/**
 * How fast `npm run dev` closes the loop on this machine (issue 18), on a
 * fresh copy of the project (its own database), as a person would use it:
 *
 *   ready     `npm run dev` started -> its "ready" line (the server answers):
 *             first start of a fresh copy, then a second start
 *   contract  a contract save adding an operation -> that operation answers 501
 *   handler   a save of its handler -> the new answer
 *   types     a contract save that breaks that handler -> the type error printed
 *
 *   node --import tsx bench/dev-loop.ts [--rounds 5] [--out dev-loop] [--log FILE]
 *
 * Prints a table (median, min, max per figure) and writes
 * bench/results/<out>.md and .json (--log: what npm run dev printed, to a
 * file). Not a test: nothing is asserted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';
import { copyProject } from '../test/support/project-copy';
import { devEnv, freePort, pollUntil, processesIn, startDev, type DevSession } from '../test/support/dev-session';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, out: { type: 'string', default: 'dev-loop' }, log: { type: 'string' } },
});
const ROUNDS = Number(values.rounds);
const RESULTS = path.resolve(__dirname, 'results');

type Figure =
  | 'ready (first start)'
  | 'ready (next start)'
  | 'contract save -> new operation answers'
  | 'handler save -> new answer'
  | 'contract save -> type error printed';
const samples = new Map<Figure, number[]>();
const record = (figure: Figure, ms: number): void => {
  samples.set(figure, [...(samples.get(figure) ?? []), ms]);
  console.log(`  ${figure}: ${Math.round(ms)} ms`);
};

function addOperation(root: string, round: number, nType: 'integer' | 'string'): void {
  const file = path.join(root, 'openapi', 'v1', 'openapi.yaml');
  const document = parse(readFileSync(file, 'utf8')) as { paths: Record<string, unknown> };
  document.paths[`/bench${round}`] = {
    get: {
      operationId: `benchOp${round}`,
      summary: `Benchmark operation ${round}`,
      description: 'Added by bench/dev-loop.ts.',
      tags: ['pets'],
      responses: {
        '200': {
          description: 'A number.',
          content: { 'application/json': { schema: { type: 'object', additionalProperties: false, required: ['n'], properties: { n: { type: nType } } } } },
        },
        '401': { $ref: '#/components/responses/Unauthorized' },
        default: { $ref: '#/components/responses/Error' },
      },
    },
  };
  writeFileSync(file, stringify(document));
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-adoption-dev-loop-'));
  const root = copyProject(path.join(scratch, 'project'));
  const port = await freePort();
  const load = [os.loadavg()[0]!];
  let dev: DevSession | undefined;
  try {
    console.log(`npm run dev on a copy in ${root}, port ${port}, ${ROUNDS} rounds`);
    let started = performance.now();
    dev = await startDev(root, { port });
    record('ready (first start)', performance.now() - started);
    // The first type check runs after the server is up; the figures below are of the loop once settled.
    await dev.waitFor(/DEV: types: /, { timeoutMs: 180_000 });
    const key = execFileSync('npm', ['run', '--silent', 'keys', '--', 'create', '--plan', 'enterprise', '--rpm', '10000000', '--rpd', '100000000'], {
      cwd: root,
      // The copy's embedded database, as npm run dev uses it.
      env: devEnv(),
      encoding: 'utf8',
    }).trim();
    const get = (url: string): Promise<Response> => fetch(`${dev!.url}${url}`, { headers: { Authorization: `Bearer ${key}` } });

    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`);
      // contract save -> the new operation answers
      let from = dev.mark();
      started = performance.now();
      addOperation(root, round, 'integer');
      await pollUntil(`/v1/bench${round} answering 501`, async () => ((await get(`/v1/bench${round}`)).status === 501 ? true : undefined), {
        intervalMs: 20,
        timeoutMs: 60_000,
      });
      record('contract save -> new operation answers', performance.now() - started);
      await dev.waitFor(/DEV: types: /, { from, timeoutMs: 120_000 });
      await settle(dev);

      // handler save -> the new answer
      from = dev.mark();
      started = performance.now();
      writeFileSync(
        path.join(root, 'src', 'service', 'handlers', `benchOp${round}.ts`),
        `import type { Handler } from './types';\n\nexport const benchOp${round}: Handler<'benchOp${round}'> = async () => ({ status: 200, body: { n: ${round} } });\n`,
      );
      await pollUntil(
        `/v1/bench${round} answering {n: ${round}}`,
        async () => {
          const res = await get(`/v1/bench${round}`);
          return res.status === 200 && ((await res.json()) as { n: number }).n === round ? true : undefined;
        },
        { intervalMs: 20, timeoutMs: 60_000 },
      );
      record('handler save -> new answer', performance.now() - started);
      await dev.waitFor(/DEV: types: /, { from, timeoutMs: 120_000 });
      await settle(dev);

      // contract save that breaks the handler -> the type error printed
      from = dev.mark();
      started = performance.now();
      addOperation(root, round, 'string');
      await dev.waitFor(new RegExp(`src/service/handlers/benchOp${round}\\.ts:\\d+:\\d+  TS\\d+`), { from, timeoutMs: 120_000 });
      record('contract save -> type error printed', performance.now() - started);
      // Back to a contract the handler satisfies.
      const fixed = dev.mark();
      addOperation(root, round, 'integer');
      await dev.waitFor(/types: all fixed/, { from: fixed, timeoutMs: 120_000 });
      await settle(dev);
    }
    await dev.interrupt();
    if (values.log) writeFileSync(values.log, dev.output());
    load.push(os.loadavg()[0]!);

    started = performance.now();
    dev = await startDev(root, { port });
    record('ready (next start)', performance.now() - started);
    await dev.interrupt();
    dev = undefined;
    const left = processesIn(root);
    if (left.length > 0) console.log(`LEFT BEHIND: ${JSON.stringify(left)}`);
  } finally {
    dev?.kill();
    rmSync(scratch, { recursive: true, force: true });
  }
  report(port, load);
}

/** Lets the loop go quiet (reload and type check done) before the next measurement. */
async function settle(dev: DevSession): Promise<void> {
  for (;;) {
    const before = dev.mark();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    if (!/DEV: /.test(dev.output().slice(before))) return;
  }
}

function report(port: number, load: number[]): void {
  const rows = [...samples].map(([figure, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
    return { figure, n: sorted.length, median: Math.round(median), min: Math.round(sorted[0]!), max: Math.round(sorted.at(-1)!) };
  });
  const node = process.version;
  const cpus = os.cpus().length;
  const lines = [
    `# npm run dev: the loop's figures`,
    '',
    `${new Date().toISOString()}, Node ${node}, ${cpus} CPUs (shared), load average ${load.map((value) => value.toFixed(2)).join(' -> ')}, port ${port}.`,
    `Command: \`node --import tsx bench/dev-loop.ts --rounds ${ROUNDS}\`. Times in ms from the save (or the start) to the answer (or the line).`,
    '',
    '| figure | n | median | min | max |',
    '|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.figure} | ${row.n} | ${row.median} | ${row.min} | ${row.max} |`),
    '',
  ];
  console.log(`\n${lines.join('\n')}`);
  writeFileSync(path.join(RESULTS, `${values.out}.md`), lines.join('\n'));
  writeFileSync(
    path.join(RESULTS, `${values.out}.json`),
    `${JSON.stringify({ date: new Date().toISOString(), node, cpus, load, rounds: ROUNDS, rows, samples: Object.fromEntries(samples) }, null, 2)}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
