/** The few statistics the benchmarks report. */

/** The median of the values measured (undefined and NaN are not measurements), or undefined when none was. */
export function median(values: Array<number | undefined>): number | undefined {
  const sorted = values.filter((value): value is number => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const maxOf = (values: Array<number | undefined>): number | undefined => {
  const known = values.filter((value): value is number => value !== undefined && Number.isFinite(value));
  return known.length ? Math.max(...known) : undefined;
};
