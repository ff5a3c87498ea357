/** The benchmark's report: its tables (text and markdown) and the targets it checks. */
import type { OpenLoopResult } from './open-loop';
import { maxOf, median } from './lib';
import { shareOf, type Cell, type PhaseResult } from './phase';

export const fmt = (value: number | undefined, digits = 0): string =>
  value === undefined || !Number.isFinite(value) ? 'n/a' : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

type Row = string[];

/** A table as aligned text and as markdown. */
export function table(header: Row, rows: Row[]): { text: string; markdown: string } {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
  const line = (row: Row): string => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return {
    text: [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n'),
    markdown: [
      `| ${header.join(' | ')} |`,
      `|${header.map((_, column) => (column === 0 ? '---' : '---:')).join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n'),
  };
}

export const cellOf = (phase: PhaseResult, server: string, scenario: string): Cell | undefined =>
  phase.cells.find((cell) => cell.server === server && cell.scenario === scenario);

export const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? undefined : a / b;

export const times = (value: number | undefined): string => (value === undefined ? 'n/a' : `${value.toFixed(2)}×`);

export interface Target {
  target: string;
  measured: string;
  pass: boolean | undefined;
}

/**
 * One table per scenario, a row per server that served it (the baselines
 * serve no write that needs a database). A scenario with a walk (placeOrder)
 * also shows each server's answers: the 201s, the 409s (pets found taken) and
 * any other status, over every round.
 */
export function comparisonTables(phase: PhaseResult): Array<{ title: string; text: string; markdown: string }> {
  return phase.scenarios.map((scenario) => {
    const project = cellOf(phase, 'project', scenario.id);
    const served = phase.servers.flatMap(({ id, label }) => {
      const cell = cellOf(phase, id, scenario.id);
      return cell ? [{ id, label, cell }] : [];
    });
    const rows = served.map(({ id, label, cell }) => {
      const isProject = id === 'project';
      return [
        label,
        fmt(cell.rps),
        `${fmt(cell.minRps)}–${fmt(cell.maxRps)}`,
        fmt(cell.p50Ms, 2),
        fmt(cell.p99Ms, 2),
        fmt(cell.cpuUsPerRequest),
        cell.loopDelayP99Ms === undefined ? '' : `${fmt(cell.loopDelayP99Ms, 1)} / ${fmt(cell.loopDelayMaxMs, 1)}`,
        fmt(cell.peakRssMb, 1),
        isProject ? '' : times(ratio(project?.rps, cell.rps)),
        ...(scenario.walk ? [answersCell(cell, scenario.status)] : []),
      ];
    });
    return {
      title: scenario.label,
      ...table(
        [
          'server',
          'req/s (median)',
          'req/s range',
          'p50 ms',
          'p99 ms',
          'CPU µs/req',
          'loop delay p99 / max ms',
          'peak RSS MB',
          'project/this',
          ...(scenario.walk ? [`answers: ${scenario.status} / 409 / other (${scenario.status} share)`] : []),
        ],
        rows,
      ),
    };
  });
}

/** A cell's answers: `12,345 / 0 / 0 (100.0 %)`. */
function answersCell(cell: Cell, expected: number): string {
  const count = (status: string): number => cell.statusCodes[status] ?? 0;
  const other = Object.entries(cell.statusCodes)
    .filter(([status]) => status !== String(expected) && status !== '409')
    .reduce((sum, [, number]) => sum + number, 0);
  return `${fmt(count(String(expected)))} / ${fmt(count('409'))} / ${fmt(other)} (${fmt(shareOf(cell.statusCodes, expected) * 100, 1)} %)`;
}

/**
 * The project against its peers (the same API doing the same work on other
 * stacks): per scenario, the median req/s of each, "project / peer" (above 1:
 * the project serves more), and the server CPU µs per request of each.
 * Undefined when the phase has no project or no peer.
 */
export function peersTable(phase: PhaseResult, peers: ReadonlyArray<{ id: string; label: string }>): { text: string; markdown: string } | undefined {
  const present = peers.filter((peer) => phase.servers.some((server) => server.id === peer.id));
  if (present.length === 0 || !phase.servers.some((server) => server.id === 'project')) return undefined;
  const rows = phase.scenarios.map((scenario) => {
    const project = cellOf(phase, 'project', scenario.id);
    const cells = present.map((peer) => cellOf(phase, peer.id, scenario.id));
    return [
      scenario.label,
      fmt(project?.rps),
      ...cells.flatMap((cell) => [fmt(cell?.rps), times(ratio(project?.rps, cell?.rps))]),
      fmt(project?.cpuUsPerRequest),
      ...cells.map((cell) => fmt(cell?.cpuUsPerRequest)),
    ];
  });
  return table(
    [
      'scenario',
      'project req/s',
      ...present.flatMap((peer) => [`${peer.label} req/s`, `project / ${peer.label}`]),
      'project CPU µs/req',
      ...present.map((peer) => `${peer.label} CPU µs/req`),
    ],
    rows,
  );
}

/** 1 worker against N, with the primary's share and a projection to more cores. */
export function workersTables(phase: PhaseResult): Array<{ title: string; text: string; markdown: string }> {
  const one = 'workers-1';
  return phase.scenarios.map((scenario) => {
    const rows = phase.servers.map(({ id, label }) => {
      const cell = cellOf(phase, id, scenario.id)!;
      const primary = median(cell.rounds.map((round) => round.primaryCpuUsPerRequest));
      const ceiling = primary ? 1e6 / primary : undefined;
      const projected = (cores: number): string => (cell.cpuUsPerRequest ? fmt(Math.min((cores * 1e6) / cell.cpuUsPerRequest, ceiling ?? Infinity)) : 'n/a');
      return [
        label,
        fmt(cell.rps),
        fmt(cell.p99Ms, 2),
        fmt(cell.cpuUsPerRequest),
        primary === undefined ? '' : fmt(primary, 1),
        ceiling === undefined ? '' : fmt(ceiling),
        projected(8),
        projected(16),
        fmt(cell.peakRssMb, 1),
        id === one ? '' : times(ratio(cell.rps, cellOf(phase, one, scenario.id)?.rps)),
      ];
    });
    return {
      title: scenario.label,
      ...table(
        [
          'server',
          'req/s (median)',
          'p99 ms',
          'CPU µs/req',
          'primary µs/req',
          'primary ceiling req/s',
          'projected 8 cores',
          'projected 16 cores',
          'peak RSS MB (all)',
          'vs 1 worker',
        ],
        rows,
      ),
    };
  });
}

export function scaleTables(phase: PhaseResult, counts: number[]): Array<{ title: string; text: string; markdown: string }> {
  const [small, big] = [`project@${counts[0]}`, `project@${counts[counts.length - 1]}`];
  return phase.scenarios.map((scenario) => {
    const rows = phase.servers.map(({ id, label }) => {
      const cell = cellOf(phase, id, scenario.id)!;
      return [label, fmt(cell.rps), `${fmt(cell.minRps)}–${fmt(cell.maxRps)}`, fmt(cell.p50Ms, 2), fmt(cell.p99Ms, 2), fmt(cell.peakRssMb, 1)];
    });
    const a = cellOf(phase, small, scenario.id);
    const b = cellOf(phase, big, scenario.id);
    rows.push([
      `ratio ${counts[counts.length - 1]!.toLocaleString('en-US')}/${counts[0]!.toLocaleString('en-US')}`,
      times(ratio(b?.rps, a?.rps)),
      '',
      times(ratio(b?.p50Ms, a?.p50Ms)),
      times(ratio(b?.p99Ms, a?.p99Ms)),
      times(ratio(b?.peakRssMb, a?.peakRssMb)),
    ]);
    return { title: scenario.label, ...table(['server', 'req/s (median)', 'req/s range', 'p50 ms', 'p99 ms', 'peak RSS MB'], rows) };
  });
}

export function targetsOf(
  compare: PhaseResult,
  scale: PhaseResult | undefined,
  atHalf: OpenLoopResult | undefined,
  options: { connections: number; scale: number[] },
): Target[] {
  const targets: Target[] = [];
  const project = (scenario: string) => cellOf(compare, 'project', scenario);
  const vsB = ratio(project('list20')?.rps, cellOf(compare, 'B', 'list20')?.rps);
  targets.push({
    target: 'listPets limit=20: project ≥ 0.4 × plain Express B (req/s)',
    measured: times(vsB),
    pass: vsB === undefined ? undefined : vsB >= 0.4,
  });
  targets.push({
    target: 'listPets limit=20: project ≥ 0.5 × plain Express B (the moonshot)',
    measured: times(vsB),
    pass: vsB === undefined ? undefined : vsB >= 0.5,
  });
  // The naive stack serves from memory: no write that needs a database (placeOrder).
  for (const scenario of compare.scenarios.filter((candidate) => candidate.reset === undefined)) {
    const vsNaive = ratio(project(scenario.id)?.rps, cellOf(compare, 'naive', scenario.id)?.rps);
    targets.push({
      target: `${scenario.label}: project ≥ 1.0 × naive (req/s)`,
      measured: times(vsNaive),
      pass: vsNaive === undefined ? undefined : vsNaive >= 1.0,
    });
  }
  for (const scenario of compare.scenarios.filter((candidate) => candidate.id === 'list20' || candidate.id === 'get')) {
    const p99 = project(scenario.id)?.p99Ms;
    targets.push({
      target: `${scenario.label}: project p99 ≤ 15 ms at ${options.connections} connections`,
      measured: `${fmt(p99, 2)} ms`,
      pass: p99 === undefined || !Number.isFinite(p99) ? undefined : p99 <= 15,
    });
  }
  if (atHalf) {
    // The target holds in every window, so its figure is the worst window's p99, not the median the table shows.
    const worst = Math.max(...atHalf.windows.map((window) => window.p99Ms));
    targets.push({
      target: `listPets limit=20: project p99 ≤ 5 ms in every window at 50 % of its capacity (open loop, ${fmt(atHalf.offeredRps)} req/s offered; the worst of ${atHalf.windows.length} windows)`,
      measured: `${fmt(worst, 2)} ms`,
      pass: Number.isFinite(worst) && atHalf.failures === 0 ? worst <= 5 : undefined,
    });
  }
  const peak = maxOf(compare.cells.filter((cell) => cell.server === 'project').map((cell) => cell.peakRssMb));
  targets.push({ target: 'project peak RSS under load ≤ 150 MB', measured: `${fmt(peak, 1)} MB`, pass: peak === undefined ? undefined : peak <= 150 });
  if (scale) {
    const [small, big] = [options.scale[0]!, options.scale[options.scale.length - 1]!];
    for (const scenario of scale.scenarios) {
      const slowdown = ratio(cellOf(scale, `project@${small}`, scenario.id)?.rps, cellOf(scale, `project@${big}`, scenario.id)?.rps);
      targets.push({
        target: `${scenario.label}: req/s at ${fmt(big)} pets within 1.2 × of ${fmt(small)} (${fmt(small)}/${fmt(big)} ≤ 1.2)`,
        measured: times(slowdown),
        pass: slowdown === undefined ? undefined : slowdown <= 1.2,
      });
    }
    const bigPeak = maxOf(scale.cells.filter((cell) => cell.server === `project@${big}`).map((cell) => cell.peakRssMb));
    targets.push({
      target: `project peak RSS under load with ${fmt(big)} pets ≤ 150 MB`,
      measured: `${fmt(bigPeak, 1)} MB`,
      pass: bigPeak === undefined ? undefined : bigPeak <= 150,
    });
  }
  return targets;
}
