/**
 * Real sockets for the hostile-client tests: raw bytes in, whatever the server
 * answers (or that it closed the connection) out. Every complete answer is
 * checked against the contract (test/support/http.ts), as supertest's are.
 */
import http from 'node:http';
import net from 'node:net';
import { checkObservedResponse, type CheckOptions } from './http';

export interface RawResult {
  /** Everything the server sent, as latin1 text. */
  raw: string;
  /** The first response's status, or undefined when the server sent nothing. */
  status: number | undefined;
  /** The first response's headers (lower-case names). */
  headers: Record<string, string>;
  /** The first response's body text. */
  text: string;
  /** Whether the first response arrived whole (its headers and Content-Length bytes of body). */
  complete: boolean;
  /** Milliseconds from connecting to the server closing the connection (undefined: still open at the deadline). */
  closedAfterMs: number | undefined;
}

/** Splits the first HTTP/1.1 response out of raw bytes (Content-Length framed, as this server answers). */
export function parseFirstResponse(raw: string): Pick<RawResult, 'status' | 'headers' | 'text' | 'complete'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return { status: undefined, headers: {}, text: '', complete: false };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const length = Number(headers['content-length'] ?? 0);
  const bytes = Buffer.from(raw.slice(end + 4), 'latin1');
  const text = bytes.subarray(0, length).toString('utf8');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]), headers, text, complete: bytes.length >= length };
}

/**
 * The method and target of the request line the chunks start with; bytes that
 * do not start with one are checked as a request outside the contract (`*`).
 */
function requestLineOf(chunks: (string | Buffer)[]): { method: string; url: string } {
  const first =
    chunks[0] === undefined
      ? ''
      : Buffer.from(chunks[0])
          .subarray(0, 64 * 1024)
          .toString('latin1');
  const match = /^([A-Za-z]+) (\S+) HTTP\/\d\.\d\r?\n/.exec(first);
  return match ? { method: match[1]!, url: match[2]! } : { method: 'GET', url: '*' };
}

export interface RawOptions {
  /** Sent one after the other, `gapMs` apart (default: all at once). */
  chunks: (string | Buffer)[];
  gapMs?: number;
  /** Give up waiting for the close after this long. */
  deadlineMs: number;
  /** For the contract check of a complete answer: the 5xx the test expects, the contract served. */
  check?: CheckOptions;
}

/**
 * Connects, sends the chunks, and waits until the server closes the
 * connection (or the deadline passes). Write errors after a close are expected.
 * A complete first answer is checked against the contract as the answer to the
 * request line the chunks start with (rejects when it breaks it).
 *
 * @example await rawExchange(port, { chunks: ['GET / HTTP/1.1\r\n'], gapMs: 200, deadlineMs: 5000 });
 */
export function rawExchange(port: number, options: RawOptions): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    const received: Buffer[] = [];
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      clearTimeout(deadline);
      clearTimeout(timer);
      const raw = Buffer.concat(received).toString('latin1');
      const result: RawResult = { raw, ...parseFirstResponse(raw), closedAfterMs: closed ? Date.now() - started : undefined };
      socket.destroy();
      try {
        if (result.complete) {
          checkObservedResponse({ ...requestLineOf(options.chunks), status: result.status!, headers: result.headers, text: result.text }, options.check);
        }
        resolve(result);
      } catch (error) {
        reject(error);
      }
    };
    const deadline = setTimeout(finish, options.deadlineMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      finish();
    });
    let next = 0;
    const sendNext = (): void => {
      if (closed || next >= options.chunks.length || socket.destroyed) return;
      socket.write(options.chunks[next++]!);
      timer = setTimeout(sendNext, options.gapMs ?? 0);
    };
    socket.once('connect', sendNext);
  });
}

/**
 * One GET on a fresh connection; resolves with its status and latency. With
 * `check` (true, or the check's options), the answer is checked against the
 * contract first (rejects when it breaks it).
 *
 * @example const { status, ms } = await timedGet(`${server.url}/v1/pets`, { Authorization: `Bearer ${key}` }, { check: true });
 */
export function timedGet(
  url: string,
  headers: Record<string, string> = {},
  { check, localAddress }: { check?: boolean | CheckOptions; localAddress?: string } = {},
): Promise<{ status: number; ms: number; text: string }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers, ...(localAddress && { localAddress }) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        const ms = Date.now() - started;
        try {
          if (check) {
            const { pathname, search } = new URL(url);
            checkObservedResponse({ method: 'GET', url: pathname + search, status: res.statusCode!, headers: res.headers, text }, check === true ? {} : check);
          }
          resolve({ status: res.statusCode!, ms, text });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer from ${url} within 10 s`)));
  });
}

/** Resident set size of a process, in MB (Linux /proc). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}
