/**
 * SeriesBatches (src/observability/batched-series.ts): observations made on
 * the request path reach prom-client in batches, and every one is there when
 * the metric is read.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { SeriesBatches } from '../src/observability';

const valuesOf = async (metric: Histogram | Counter): Promise<Array<{ metricName?: string; labels: Record<string, unknown>; value: number }>> =>
  (await metric.get()).values as Array<{ metricName?: string; labels: Record<string, unknown>; value: number }>;

/** A metric's `collect` that hands over what `batched` gathered for it, as src/observability/metrics.ts wires every metric. */
const flushing = (batched: SeriesBatches) =>
  function collect(this: object): void {
    batched.flush(this);
  };

describe('SeriesBatches', () => {
  it('a histogram read sees every observation: count, sum and buckets', async () => {
    const batched = new SeriesBatches();
    const histogram: Histogram<'operation'> = new Histogram({
      name: 'batched_test_seconds',
      help: 'test',
      labelNames: ['operation'],
      buckets: [0.001, 0.01],
      registers: [new Registry()],
      collect: flushing(batched),
    });
    const series = batched.histogramSeries(histogram, { operation: 'getPet' });
    for (let at = 0; at < 600; at++) series.observe(at % 2 === 0 ? 0.0005 : 0.005);
    const values = await valuesOf(histogram);
    const value = (name: string, le?: number) => values.find((entry) => entry.metricName === name && (le === undefined || entry.labels['le'] === le))?.value;
    expect(value('batched_test_seconds_count')).toBe(600);
    expect(value('batched_test_seconds_sum')).toBeCloseTo(300 * 0.0005 + 300 * 0.005, 10);
    expect(value('batched_test_seconds_bucket', 0.001)).toBe(300);
    expect(value('batched_test_seconds_bucket', 0.01)).toBe(600);
    // Read again: nothing counted twice.
    expect((await valuesOf(histogram)).find((entry) => entry.metricName === 'batched_test_seconds_count')?.value).toBe(600);
  });

  it('hands a full batch over without waiting for a read, so what waits stays small', async () => {
    const batched = new SeriesBatches();
    // No collect: only the full batches reach prom-client.
    const histogram = new Histogram({ name: 'unread_test_seconds', help: 'test', labelNames: ['operation'], buckets: [1], registers: [] });
    const series = batched.histogramSeries(histogram, { operation: 'getPet' });
    for (let at = 0; at < 600; at++) series.observe(0.5);
    const count = (await valuesOf(histogram)).find((entry) => entry.metricName === 'unread_test_seconds_count')?.value;
    expect(count).toBeGreaterThanOrEqual(512);
    expect(count).toBeLessThan(600);
  });

  it('a counter read sees every increment, each series its own', async () => {
    const batched = new SeriesBatches();
    const counter: Counter<'result'> = new Counter({
      name: 'batched_test_total',
      help: 'test',
      labelNames: ['result'],
      registers: [],
      collect: flushing(batched),
    });
    const hit = batched.counterSeries(counter, { result: 'hit' });
    const miss = batched.counterSeries(counter, { result: 'miss' });
    for (let at = 0; at < 1000; at++) hit.inc();
    miss.inc();
    const values = await valuesOf(counter);
    expect(values.find((entry) => entry.labels['result'] === 'hit')?.value).toBe(1000);
    expect(values.find((entry) => entry.labels['result'] === 'miss')?.value).toBe(1);
    hit.inc();
    expect((await valuesOf(counter)).find((entry) => entry.labels['result'] === 'hit')?.value).toBe(1001);
  });
});
