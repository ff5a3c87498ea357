import type { Counter, Histogram } from 'prom-client';

/** Observations of one series gathered before they are handed to prom-client. */
const BATCH = 256;

/** A series that hands what it gathered to its metric. */
interface Pending {
  flush(): void;
}

/**
 * The series of a metric whose observations are made on the request path,
 * batched: a histogram's are kept in an array and handed to prom-client when
 * `BATCH` have gathered, a counter's are counted, and both whenever the
 * metric is read (its `collect`, which
 * prom-client calls before every read: the exposition, a worker's report to
 * the primary, a test's `get()`). What is read is exactly what was observed.
 * prom-client validates and hashes a series' labels on every observation;
 * made one at a time between the rest of a request's work that costs several
 * times what the same calls cost in a batch, where its code stays hot.
 *
 * @example
 * const batches = new SeriesBatches();
 * const histogram = new Histogram({ name, help, labelNames: ['operation'], collect: () => batches.flush(histogram) });
 * const getPet = batches.histogramSeries(histogram, { operation: 'getPet' });
 * getPet.observe(0.002);
 */
export class SeriesBatches {
  private readonly pending = new Map<object, Pending[]>();

  /** A histogram's series (a fixed label set) taking observations. */
  histogramSeries<L extends string>(histogram: Histogram<L>, labels: Partial<Record<L, string | number>>): { observe(value: number): void } {
    const series = new BatchedObservations(histogram.labels(labels));
    this.add(histogram, series);
    return series;
  }

  /** A counter's series (a fixed label set) counting by one. */
  counterSeries<L extends string>(counter: Counter<L>, labels: Partial<Record<L, string | number>>): { inc(): void } {
    const series = new BatchedCount(counter.labels(labels));
    this.add(counter, series);
    return series;
  }

  /** Hands every series of `metric` its gathered observations: the metric's `collect`. */
  flush(metric: object): void {
    for (const series of this.pending.get(metric) ?? []) series.flush();
  }

  private add(metric: object, series: Pending): void {
    const all = this.pending.get(metric);
    if (all) all.push(series);
    else this.pending.set(metric, [series]);
  }
}

class BatchedObservations implements Pending {
  private readonly values = new Float64Array(BATCH);
  private length = 0;

  constructor(private readonly series: { observe(value: number): void }) {}

  observe(value: number): void {
    this.values[this.length++] = value;
    if (this.length === BATCH) this.flush();
  }

  flush(): void {
    const count = this.length;
    this.length = 0;
    for (let at = 0; at < count; at++) this.series.observe(this.values[at]!);
  }
}

class BatchedCount implements Pending {
  private count = 0;

  constructor(private readonly series: { inc(value?: number): void }) {}

  inc(): void {
    this.count++;
  }

  flush(): void {
    if (this.count === 0) return;
    const count = this.count;
    this.count = 0;
    this.series.inc(count);
  }
}
