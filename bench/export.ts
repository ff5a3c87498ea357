/**
 * `node --import tsx bench/export.ts [--pets N] [--no-build] [--rounds R] [--check]`
 * (`npm run bench:export`): the JSON Lines export of v2
 * (`GET /v2/pets/export`) of N pets (1,000,000 by default) from the server
 * as `npm start` runs it in production. Reports records per second and the
 * server's peak RSS during the export against its RSS warmed up and at rest
 * just before (the export must hold memory flat: within 10 MB; with
 * --check, as CI runs it, exit 1 when it does not).
 *
 * Writes bench/results/export.md and export.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PeakRss, ROOT, ServerProcess, killAllServers, prepareProjectDatabase, projectSpec, rssMb, runCommand, sleep } from './lib';

interface Round {
  records: number;
  seconds: number;
  recordsPerSecond: number;
  restMb: number;
  peakMb: number;
  growthMb: number;
}

/** Reads the whole export over one connection, counting records; the response must end normally (its last chunk). */
function exportAll(baseUrl: string, key: string): Promise<{ records: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(`${baseUrl}/v2/pets/export`, { headers: { authorization: `Bearer ${key}` }, agent: false }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`export answered ${response.statusCode}`));
      let records = 0;
      response.on('data', (chunk: Buffer) => {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) records++;
      });
      response.on('end', () => resolve({ records, seconds: (performance.now() - started) / 1000 }));
      response.on('aborted', () => reject(new Error('the export ended before its last chunk')));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pets: { type: 'string', default: '1000000' },
      rounds: { type: 'string', default: '3' },
      'no-build': { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
    },
  });
  const pets = Number(values.pets);
  if (!values['no-build']) await runCommand('npm', ['run', 'build'], { inheritOutput: true });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pet-export-'));
  try {
    console.log(`seeding ${pets.toLocaleString('en-US')} pets...`);
    const database = await prepareProjectDatabase(scratch, 'export', pets);
    const server = await ServerProcess.start(projectSpec('project', 'project', database));
    const rounds: Round[] = [];
    try {
      // Warm up: the route, the statement and a first export (at most a few seconds of it), then let the server settle.
      await exportAll(server.baseUrl, database.key);
      for (let round = 0; round < Number(values.rounds); round++) {
        await sleep(2000);
        const restMb = rssMb(server.pid) ?? Number.NaN;
        const peak = new PeakRss(server.pid);
        const { records, seconds } = await exportAll(server.baseUrl, database.key);
        const peakMb = peak.stop() ?? Number.NaN;
        if (records !== pets) throw new Error(`the export sent ${records} records, not ${pets}`);
        rounds.push({ records, seconds, recordsPerSecond: records / seconds, restMb, peakMb, growthMb: peakMb - restMb });
        console.log(
          `round ${round + 1}: ${records.toLocaleString('en-US')} records in ${seconds.toFixed(2)} s (${Math.round(records / seconds).toLocaleString('en-US')}/s); ` +
            `RSS at rest ${restMb.toFixed(1)} MB, peak ${peakMb.toFixed(1)} MB (+${(peakMb - restMb).toFixed(1)} MB)`,
        );
      }
    } finally {
      await server.stop();
    }
    const worst = Math.max(...rounds.map((round) => round.growthMb));
    const median = [...rounds].sort((a, b) => a.recordsPerSecond - b.recordsPerSecond)[Math.floor(rounds.length / 2)]!;
    const lines = [
      `# The JSON Lines export of ${pets.toLocaleString('en-US')} pets — ${new Date().toISOString()}, Node ${process.version}`,
      '',
      '`GET /v2/pets/export` from the server as `npm start` runs it in production (SQLite), read over one connection by this process.',
      'RSS at rest: the server warmed up (one export done) and idle 2 s; peak: its high-water mark during the export.',
      '',
      '| round | records | seconds | records/s | RSS at rest MB | peak RSS MB | growth MB |',
      '|---:|---:|---:|---:|---:|---:|---:|',
      ...rounds.map(
        (round, index) =>
          `| ${index + 1} | ${round.records.toLocaleString('en-US')} | ${round.seconds.toFixed(2)} | ${Math.round(round.recordsPerSecond).toLocaleString('en-US')} | ${round.restMb.toFixed(1)} | ${round.peakMb.toFixed(1)} | ${round.growthMb.toFixed(1)} |`,
      ),
      '',
      `Median ${Math.round(median.recordsPerSecond).toLocaleString('en-US')} records/s; the largest growth over rest ${worst.toFixed(1)} MB (target: at most 10 MB): ${worst <= 10 ? 'met' : 'missed'}.`,
      '',
    ];
    writeFileSync(path.join(ROOT, 'bench/results/export.md'), lines.join('\n'));
    writeFileSync(path.join(ROOT, 'bench/results/export.json'), `${JSON.stringify({ pets, rounds }, null, 2)}\n`);
    console.log(lines.slice(-2).join('\n'));
    // CI (--check): a growth past the target fails.
    if (values.check && worst > 10) process.exitCode = 1;
  } finally {
    killAllServers();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  killAllServers();
  process.exit(1);
});
