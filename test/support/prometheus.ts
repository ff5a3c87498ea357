/** One sample of the Prometheus text format: `name{label="value",...} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the samples of a Prometheus text exposition (comments skipped).
 * Enough for the label values this service emits (no escaped quotes).
 *
 * @example samples(text).find((s) => s.name === 'pas_key_cache_lookups_total' && s.labels.result === 'hit')
 */
export function samples(text: string): Sample[] {
  const parsed: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    parsed.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return parsed;
}

/** The value of the one sample with this name and (at least) these labels; undefined when absent. */
export function sampleValue(all: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = all.filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
