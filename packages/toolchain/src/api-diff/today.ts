/**
 * The day the contract commands judge by: whether a sunset date has passed
 * (api:diff, api:release) and the date a release is recorded with. A UTC
 * calendar date, like `x-sunset` (the `Sunset` header is midnight UTC of it),
 * and injectable so that tests and a release made after midnight elsewhere
 * can say which day it is.
 */

/** The environment variable that sets the day when `--today` is not given. */
export const TODAY_ENV = 'API_DIFF_TODAY';

/** A `YYYY-MM-DD` string naming a real calendar day (so `2030-02-30` is not one). */
export function isIsoDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/**
 * The day: `--today` when given, else `$API_DIFF_TODAY`, else the real date (UTC).
 * An error message (for exit 2) when the chosen one is not a `YYYY-MM-DD` date.
 *
 * @example
 * resolveToday('2030-12-05');                          // { today: '2030-12-05' }
 * resolveToday(undefined, { API_DIFF_TODAY: '2031-01-01' }); // { today: '2031-01-01' }
 * resolveToday('tomorrow');                            // { error: '--today must be a YYYY-MM-DD date, got "tomorrow"' }
 */
export function resolveToday(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, now: Date = new Date()): { today: string } | { error: string } {
  const fromEnv = env[TODAY_ENV];
  const [value, source] =
    flag !== undefined ? [flag, '--today'] : fromEnv !== undefined && fromEnv !== '' ? [fromEnv, TODAY_ENV] : [now.toISOString().slice(0, 10), 'the clock'];
  return isIsoDate(value) ? { today: value } : { error: `${source} must be a YYYY-MM-DD date, got ${JSON.stringify(value)}` };
}
