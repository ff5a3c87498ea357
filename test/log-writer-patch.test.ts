/**
 * The patch of sonic-boom (patches/sonic-boom+4.2.1.patch), the writer under
 * pino's asynchronous destination: lines that gather behind a write in flight
 * are appended without measuring the whole gathered buffer again. The
 * published package measured it (`Buffer.byteLength`) on every line, which
 * flattens the growing string: the work per line grew with the backlog, so a
 * slow stdout reader made every log line dearer. And a write that took its
 * string whole is released without copying that string into a Buffer. The
 * writer is driven directly, through pino's public `pino.destination`, as the
 * server builds it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';

const LINE = `${JSON.stringify({ level: 30, requestId: 'r'.repeat(36), path: '/v1/pets/1', status: 200, msg: 'request' })}\n`;
const MULTIBYTE_LINE = `${JSON.stringify({ level: 30, name: 'Ünïcødé 🐕', msg: 'request' })}\n`;

describe('the log writer (sonic-boom, patched)', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'log-writer-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const destination = (file: string, maxWrite = 65_536) => pino.destination({ dest: file, sync: false, minLength: 3_072, maxWrite });
  const ready = (stream: ReturnType<typeof destination>) => new Promise((resolve) => stream.once('ready', resolve));
  /** Ends the stream and waits until every line is written and the file closed. */
  const closed = async (stream: ReturnType<typeof destination>): Promise<void> => {
    const done = new Promise((resolve) => stream.once('close', resolve));
    stream.end();
    await done;
  };

  it('measures each line once, never the lines gathered before it', async () => {
    const stream = destination(path.join(folder, 'a.log'));
    await ready(stream);
    const measured: number[] = [];
    const byteLength = Buffer.byteLength;
    const spy = jest.spyOn(Buffer, 'byteLength').mockImplementation((value, encoding) => {
      if (typeof value === 'string') measured.push(value.length);
      return byteLength(value, encoding);
    });
    try {
      // The first lines start a write; the next 200 gather behind it, in the same turn.
      for (let index = 0; index < 220; index++) stream.write(LINE);
    } finally {
      spy.mockRestore();
    }
    await closed(stream);
    // Published: the gathered buffer was measured too, up to about 200 lines long.
    expect(Math.max(...measured)).toBe(LINE.length);
  });

  it('copies no written string into a Buffer once the write has taken it whole', async () => {
    const stream = destination(path.join(folder, 'c.log'));
    await ready(stream);
    const copied: number[] = [];
    const from = Buffer.from;
    const spy = jest.spyOn(Buffer, 'from').mockImplementation(((value: unknown, ...rest: unknown[]) => {
      if (typeof value === 'string') copied.push(value.length);
      return (from as (...args: unknown[]) => Buffer)(value, ...rest);
    }) as typeof Buffer.from);
    try {
      for (let index = 0; index < 220; index++) stream.write(LINE);
      await closed(stream);
    } finally {
      spy.mockRestore();
    }
    // Published: every finished write copied its whole string (kilobytes each) into a Buffer, only to
    // take an empty subarray of it: garbage the size of the log, which filled the old generation.
    expect(copied).toEqual([]);
  });

  it('writes every line whole and in order, a buffer never above maxWrite bytes', async () => {
    const file = path.join(folder, 'b.log');
    const stream = destination(file, 4_096);
    await ready(stream);
    const writes: number[] = [];
    stream.on('write', (bytes: number) => writes.push(bytes));
    const written: string[] = [];
    for (let index = 0; index < 500; index++) {
      const line = index % 3 === 0 ? MULTIBYTE_LINE : LINE.replace('"r', `"${index}`);
      written.push(line);
      stream.write(line);
    }
    await closed(stream);
    expect(readFileSync(file, 'utf8')).toBe(written.join(''));
    // maxWrite counts bytes, not characters: no write carried more.
    expect(writes.length).toBeGreaterThan(5);
    expect(Math.max(...writes)).toBeLessThanOrEqual(4_096);
  });
});
