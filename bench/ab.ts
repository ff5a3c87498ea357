/**
 * A/B of the project server under different Node flags (or the same flags
 * twice, to see the noise): listPets limit=20, server pinned, wrk, interleaved.
 *
 *   node --import tsx bench/ab.ts --flags "" --flags "--max-semi-space-size=4" [--rounds 3] [--seconds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SCENARIOS, ServerProcess, killAllServers, load, median, prepareProjectDatabase, projectSpec } from './lib';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { flags: { type: 'string', multiple: true }, rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' }, scenario: { type: 'string', default: 'list20' } },
  });
  const variants = values.flags ?? ['', ''];
  const scenario = SCENARIOS[values.scenario as keyof typeof SCENARIOS];
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-ab-'));
  const database = await prepareProjectDatabase(scratch, 'ab', 1000);
  const servers = [];
  for (const [index, flags] of variants.entries()) {
    servers.push(await ServerProcess.start(projectSpec(`v${index}`, flags || '(no flags)', database, flags.split(' ').filter(Boolean))));
  }
  const results = variants.map(() => [] as Array<Awaited<ReturnType<typeof load>>>);
  for (const server of servers) await load(server, scenario, database.key, 2, 32);
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [index, server] of servers.entries()) results[index]!.push(await load(server, scenario, database.key, Number(values.seconds), 32));
  }
  for (const [index, server] of servers.entries()) {
    const r = results[index]!;
    console.log(
      `${server.spec.label.padEnd(36)} ${Math.round(median(r.map((x) => x.rps)))} req/s  ${median(r.map((x) => x.cpuUsPerRequest ?? NaN)).toFixed(1)} µs CPU/req  ` +
        `p99 ${median(r.map((x) => x.p99Ms)).toFixed(2)} ms  peak RSS ${Math.max(...r.map((x) => x.peakRssMb ?? 0)).toFixed(1)} MB`,
    );
  }
  for (const server of servers) await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}
main().catch((error: unknown) => {
  killAllServers();
  console.error(error);
  process.exit(1);
});
