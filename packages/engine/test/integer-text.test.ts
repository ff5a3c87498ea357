/**
 * integerText (src/response/integer-text.ts): the text of the numbers
 * a response or a log line carries that change per request (Content-Length,
 * the rate-limit headers, the log's time). It must read as String(n) does,
 * and leave nothing behind in the old generation: String(n) keeps each new
 * value's string in V8's number-to-string cache, which promotes it. The
 * promotion is measured in a child process of its own (no test runner
 * allocating beside it): the bytes each young collection moved into the old
 * space, from v8.GCProfiler, while 100,000 distinct numbers are converted
 * amid short-lived garbage, as a server converts them amid its requests,
 * against the same loop without the conversions.
 */
import { spawnSync } from 'node:child_process';
import { integerText } from '../src/response/integer-text';
import path from 'node:path';

/** The package's folder: the probes import its sources. */
const PACKAGE_ROOT = path.resolve(__dirname, '..');

const PROMOTION_PROBE = `
import v8 from 'node:v8';
import { integerText } from './src/response/integer-text.ts';
const convert = { String, integerText, none: () => '1234567' }[process.argv[1]];
const profiler = new v8.GCProfiler();
profiler.start();
let garbage = [];
let length = 0;
for (let value = 1_000_000; value < 1_100_000; value++) {
  for (let i = 0; i < 40; i++) garbage.push({ i });
  if (garbage.length > 40) garbage = [];
  length += convert(value).length;
}
const oldSpace = (side) => side.heapSpaceStatistics.find((space) => space.spaceName === 'old_space').spaceUsedSize;
let promoted = 0;
for (const gc of profiler.stop().statistics) if (gc.gcType === 'Scavenge') promoted += oldSpace(gc.afterGC) - oldSpace(gc.beforeGC);
console.log(JSON.stringify({ promoted, length }));
`;

/** Bytes promoted by young collections while converting 100,000 new numbers with `convert` (`none`: the same loop without converting). */
function promotedBy(convert: 'String' | 'integerText' | 'none'): number {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROMOTION_PROBE, convert], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`the probe failed: ${run.stderr}`);
  const { promoted, length } = JSON.parse(run.stdout) as { promoted: number; length: number };
  expect(length).toBe(700_000);
  return promoted;
}

describe('integerText', () => {
  it('reads as String(n) for the integers it is given', () => {
    for (const value of [0, -0, 1, 9, 10, 42, 99, 100, 4096, 2 ** 31 - 1, 2 ** 31, 2 ** 32, Date.now(), Number.MAX_SAFE_INTEGER, -1, -(2 ** 31)]) {
      expect(integerText(value)).toBe(String(value));
    }
  });

  it('leaves no string of a converted number in the old generation, where String(n) leaves one per new value', () => {
    // The loop alone promotes some (its live objects at each collection); 100,000 strings of 7 digits are about 2.4 MB more.
    const loop = promotedBy('none');
    expect(promotedBy('String') - loop).toBeGreaterThan(1_500_000);
    // The loop's own share varies by a few hundred KB from run to run.
    expect(promotedBy('integerText') - loop).toBeLessThan(600_000);
  });
});
