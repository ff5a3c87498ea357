/**
 * The dev loop's own lines, shaped like the server's pretty log
 * (`[HH:MM:ss.l] DEV: ...`) so the two read as one stream: one line per
 * event, details (problems, code frames) indented below it.
 */
const colour = process.stdout.isTTY === true && !('NO_COLOR' in process.env);

const paint = (code: number, text: string): string => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);

export type Tone = 'info' | 'ok' | 'warn' | 'error';

const LABEL: Record<Tone, string> = {
  info: paint(35, 'DEV'),
  ok: paint(32, 'DEV'),
  warn: paint(33, 'DEV'),
  error: paint(31, 'DEV'),
};

function clock(date = new Date()): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

/** Prints one event line, and `details` indented under it. */
export function event(message: string, tone: Tone = 'info', details: string[] = []): void {
  const lines = [`[${clock()}] ${LABEL[tone]}: ${message}`, ...details.map((line) => `    ${line}`)];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `1234` -> `1.2 s`, `85` -> `85 ms`. */
export function took(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The time of day of a date, for "the contract of 12:03:04". */
export const timeOf = (date: Date): string => clock(date).slice(0, 8);

export const bold = (text: string): string => paint(1, text);
