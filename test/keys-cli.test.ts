import http from 'node:http';
import { runKeysCli, startServer, type RunningServer } from './support/processes';
import { tempDir } from './support/paths';
import { checkObservedResponse } from './support/http';
import { openStorage } from '../src/service/storage';
import type { KeyView } from '../scripts/lib/key-listing';
import { FIXED_SETTINGS } from '../src/config';

const KEY_CACHE_TTL_MS = FIXED_SETTINGS.keyCacheTtlMs;

/** The keys CLI (scripts/keys.ts) as people and scripts use it, on SQLite; the Redis signal is in multi-instance.test.ts. */

const KEY = /pas_[A-Za-z0-9_-]{43}/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const freshEnv = () => ({ DATABASE_URL: `sqlite:${tempDir()}/pets.db` });
const COMMANDS = ['create', 'list', 'show', 'rotate', 'revoke', 'set-plan'];

function cli(args: string[], env: Record<string, string>) {
  const result = runKeysCli(args, env);
  if (result.status !== 0) throw new Error(`keys ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}
const createKey = (env: Record<string, string>, ...args: string[]): string => cli(['create', ...args], env).trim();
const listJson = (env: Record<string, string>): KeyView[] => JSON.parse(cli(['list', '--json'], env));

/**
 * GET /v1/pets on a connection of its own: runKeysCli blocks this process's
 * event loop for seconds, so a pooled keep-alive connection the server has
 * closed meanwhile would look reusable (fetch fails with "other side closed").
 * Hence node:http rather than checkedFetch; the answer is checked against the contract all the same.
 */
function get(server: RunningServer, key: string): Promise<{ status: number; remaining: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}/v1/pets`, { agent: false, headers: { Authorization: `Bearer ${key}` } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          try {
            const body = checkObservedResponse({ method: 'GET', url: '/v1/pets', status: res.statusCode!, headers: res.headers, text });
            resolve({ status: res.statusCode!, remaining: Number(res.headers['x-ratelimit-remaining']), body });
          } catch (error) {
            reject(error);
          }
        });
      })
      .on('error', reject);
  });
}

/** Any request on a connection of its own (as `get`), its answer checked against the contract. */
function send(
  server: RunningServer,
  method: string,
  url: string,
  key: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${url}`, { method, agent: false, headers: { Authorization: `Bearer ${key}`, ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode!, body: checkObservedResponse({ method, url, status: res.statusCode!, headers: res.headers, text }) });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The start of each column, from the header line (columns are separated by two spaces or more). */
function columnStarts(header: string): Map<string, number> {
  const starts = new Map<string, number>();
  for (const match of header.matchAll(/\S+(?: \S+)*/g)) starts.set(match[0], match.index);
  return starts;
}

describe('keys list and show', () => {
  const env = freshEnv();
  let bannedUntil: Date;

  beforeAll(async () => {
    createKey(env, '--plan', 'free', '--label', 'ci bot');
    createKey(env, '--plan', 'enterprise', '--rpm', '5000', '--rpd', '2000000', '--role', 'staff');
    createKey(env, '--plan', 'pro', '--label', 'old "mobile" app');
    cli(['revoke', '3'], env);
    const storage = await openStorage(env.DATABASE_URL);
    bannedUntil = new Date(Date.now() + 15 * 60_000);
    await storage.apiKeys.setBannedUntil(1, bannedUntil);
    await storage.close();
  });

  it('list prints an aligned table: no index column, no quotes, ISO dates, revoked and banned-until plainly', () => {
    const lines = cli(['list'], env).trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    const [header, ...rows] = lines as [string, ...string[]];
    expect(header).toMatch(/^ID {2}PREFIX {2,}PLAN {2,}ROLE {2,}PER MINUTE {2}PER DAY {2,}CREATED {2,}REVOKED {2,}BANNED UNTIL {2,}LABEL$/);
    const starts = columnStarts(header);
    const cell = (row: string, column: string, next?: string) => row.slice(starts.get(column), next === undefined ? undefined : starts.get(next)).trim();
    const [free, enterprise, revoked] = rows as [string, string, string];
    // Right-aligned numbers end under their header; the other cells start under it.
    expect(free.slice(0, 2)).toBe(' 1');
    expect(cell(free, 'PLAN', 'ROLE')).toBe('free');
    expect(cell(free, 'ROLE', 'PER MINUTE')).toBe('customer');
    expect(cell(enterprise, 'ROLE', 'PER MINUTE')).toBe('staff');
    expect(cell(free, 'PER MINUTE', 'PER DAY')).toBe('60');
    expect(cell(enterprise, 'PER MINUTE', 'PER DAY')).toBe('5000');
    expect(cell(enterprise, 'PER DAY', 'CREATED')).toBe('2000000');
    expect(cell(enterprise, 'PLAN', 'ROLE')).toBe('enterprise');
    expect(cell(free, 'CREATED', 'REVOKED')).toMatch(ISO);
    expect(cell(free, 'BANNED UNTIL', 'LABEL')).toBe(bannedUntil.toISOString());
    expect(cell(free, 'REVOKED', 'BANNED UNTIL')).toBe('-');
    expect(cell(revoked, 'REVOKED', 'BANNED UNTIL')).toMatch(ISO);
    expect(cell(revoked, 'BANNED UNTIL', 'LABEL')).toBe('-');
    expect(cell(free, 'LABEL')).toBe('ci bot');
    expect(cell(enterprise, 'LABEL')).toBe('-');
    expect(cell(revoked, 'LABEL')).toBe('old "mobile" app'); // the label as given, not quoted again
    expect(cell(free, 'PREFIX', 'PLAN')).toMatch(/^pas_[A-Za-z0-9_-]{6}…$/);
    for (const row of rows) expect(row).not.toMatch(/[│┌└']/);
  });

  it('list --json gives scripts every field, with null for none and no secret', () => {
    const keys = listJson(env);
    expect(keys).toEqual([
      expect.objectContaining({
        id: 1,
        plan: 'free',
        role: 'customer',
        label: 'ci bot',
        requestsPerMinute: 60,
        requestsPerDay: 1000,
        revokedAt: null,
        bannedUntil: bannedUntil.toISOString(),
      }),
      expect.objectContaining({
        id: 2,
        plan: 'enterprise',
        role: 'staff',
        label: '',
        requestsPerMinute: 5000,
        requestsPerDay: 2000000,
        revokedAt: null,
        bannedUntil: null,
      }),
      expect.objectContaining({ id: 3, plan: 'pro', requestsPerMinute: 300, requestsPerDay: 10000, revokedAt: expect.stringMatching(ISO) }),
    ]);
    expect(Object.keys(keys[0]!).sort()).toEqual([
      'bannedUntil',
      'createdAt',
      'id',
      'label',
      'plan',
      'prefix',
      'requestsPerDay',
      'requestsPerMinute',
      'revokedAt',
      'role',
    ]);
  });

  it('an ended ban is not shown', async () => {
    const ended = freshEnv();
    createKey(ended, '--plan', 'free');
    const storage = await openStorage(ended.DATABASE_URL);
    await storage.apiKeys.setBannedUntil(1, new Date(Date.now() - 1000));
    await storage.close();
    expect(listJson(ended)[0]!.bannedUntil).toBeNull();
  });

  it('show <id> prints one key, field per line; --json the same object as list', () => {
    expect(cli(['show', '1'], env)).toMatch(
      new RegExp(
        [
          '^id {12}1',
          'prefix {8}pas_\\S{6}…',
          'plan {10}free',
          'role {10}customer',
          "limits {8}60 per minute, 1000 per day \\(the free plan's\\)",
          'label {9}ci bot',
          'created {7}\\S+Z',
          'revoked {7}no',
          `banned until  ${bannedUntil.toISOString().replace(/\./g, '\\.')}\n$`,
        ].join('\n'),
      ),
    );
    expect(cli(['show', '3'], env)).toMatch(/^revoked {7}\d{4}-.*Z$/m);
    expect(cli(['show', '2'], env)).toMatch(/^banned until {2}not banned$/m);
    expect(JSON.parse(cli(['show', '2', '--json'], env))).toEqual(listJson(env)[1]);
  });

  it('an empty database says so (and --json gives [])', () => {
    const empty = freshEnv();
    expect(cli(['list'], empty)).toMatch(/^no keys/);
    expect(JSON.parse(cli(['list', '--json'], empty))).toEqual([]);
  });
});

describe('bad input: one line on stderr, exit code 2, nothing changed', () => {
  const env = freshEnv();
  let before: string;
  beforeAll(() => {
    createKey(env, '--plan', 'free');
    createKey(env, '--plan', 'free');
    cli(['revoke', '2'], env);
    before = cli(['list', '--json'], env);
  });
  afterAll(() => {
    expect(cli(['list', '--json'], env)).toBe(before);
  });

  it.each([
    [[], /^keys: missing command/],
    [['frobnicate'], /^keys: unknown command "frobnicate": use one of create, list, show, rotate, revoke, set-plan/],
    [['create'], /--plan is required \(one of free, pro, business, enterprise\)/],
    [['create', '--plan', 'gold'], /unknown plan "gold"/],
    [['create', '--plan', 'free', '--role', 'admin'], /unknown role "admin": --role must be one of customer, staff/],
    [['create', '--plan', 'enterprise'], /an enterprise key needs --rpm N and --rpd N/],
    [['create', '--plan', 'enterprise', '--rpm', '10', '--rpd', 'lots'], /--rpd must be a positive integer, got "lots"/],
    [['create', '--plan', 'free', '--rpm', '10'], /--rpm and --rpd are only for enterprise keys/],
    [['set-plan', '1', '--plan', 'pro', '--rpd', '10'], /--rpm and --rpd are only for enterprise keys/],
    [['set-plan', '9', '--plan', 'pro'], /no key with id 9$/],
    [['show', '9'], /no key with id 9$/],
    [['revoke', '9'], /no key with id 9$/],
    [['rotate', '9'], /no key with id 9$/],
    [['rotate', '2'], /key 2 is revoked/],
    [['show', 'abc'], /<id> must be a positive integer, got "abc"/],
    [['revoke', '1.5'], /<id> must be a positive integer, got "1.5"/],
    [['show'], /missing <id>: keys show <id> \[--json\]/],
    [['rotate'], /missing <id>: keys rotate <id>$/],
    [['show', '1', '2'], /unexpected argument "2"/],
    [['list', '--all'], /Unknown option '--all'/],
  ])('keys %j', (args, message) => {
    const result = runKeysCli(args, env);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^keys: [^\n]+\n$/); // one line, no stack
    expect(result.stderr.trimEnd()).toMatch(message);
    expect(result.stdout).toBe('');
  });
});

describe('--help', () => {
  // Help never opens the database: an unreachable one does not matter.
  const unreachable = { DATABASE_URL: 'postgres://pets:pets@127.0.0.1:1/none' };

  it.each([['--help'], ['-h'], ['help']])('keys %s lists every command', (flag) => {
    const result = runKeysCli([flag], unreachable);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${command} .*\\S  +\\S`, 'm'));
  });

  it.each([...COMMANDS.map((command) => [command, '--help']), ['rotate', '-h'], ['help', 'show']])('keys %s %s explains it', (...args) => {
    const result = runKeysCli(args, unreachable);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(new RegExp(`^usage: keys ${args.find((arg) => COMMANDS.includes(arg))}\\b`));
    expect(result.stdout.trimEnd().split('\n').length).toBeGreaterThanOrEqual(3);
  });
});

it('a database that cannot be reached: one line, exit code 1', () => {
  const result = runKeysCli(['list'], { DATABASE_URL: 'postgres://pets:pets@127.0.0.1:1/none' });
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(/^keys: error: [^\n]*ECONNREFUSED[^\n]*\n$/);
  expect(result.stdout).toBe('');
});

it('bad configuration: one line, exit code 1', () => {
  const result = runKeysCli(['list'], { DATABASE_URL: 'mysql://x' });
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(/^keys: error: invalid configuration: DATABASE_URL: [^\n]+\n$/);
});

describe('against the database of a running server', () => {
  const env = freshEnv();
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ ...env, NODE_ENV: 'production' });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('create prints the key alone on stdout; it works at once; revoke stops it within 2 s', async () => {
    const created = runKeysCli(['create', '--plan', 'pro', '--label', 'ci bot'], env);
    expect(created.status).toBe(0);
    expect(created.stdout).toMatch(new RegExp(`^${KEY.source}\\n$`));
    expect(created.stderr).toMatch(/^created key \d+ \(pro, customer, ci bot\); it is shown only now:\n$/);
    const key = created.stdout.trim();
    expect((await get(server, key)).status).toBe(200);
    const cachedBy = Date.now(); // the server cached the key before answering that first request
    const listed = cli(['list'], env);
    expect(listed).toContain(key.slice(0, 10));
    expect(listed).not.toContain(key.slice(10));
    const { id } = listJson(env).find((view) => view.label === 'ci bot')!;

    expect(cli(['revoke', String(id)], env)).toBe(`key ${id} revoked: servers refuse it within 2 s\n`);
    // Served from the key cache only, so never by a request sent once the cached copy has expired
    // (KEY_CACHE_TTL_MS after cachedBy, which was before the revocation): no margin to guess.
    for (;;) {
      const sentAt = Date.now();
      const { status } = await get(server, key);
      if (status === 401) break;
      expect(status).toBe(200);
      expect(sentAt - cachedBy).toBeLessThan(KEY_CACHE_TTL_MS);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('create --role staff makes a key that may change a pet; a customer key may not (403 staff_only)', async () => {
    const staff = createKey(env, '--plan', 'pro', '--role', 'staff');
    const customer = createKey(env, '--plan', 'pro');
    const created = await send(server, 'POST', '/v2/pets', staff, { 'Content-Type': 'application/json' }, '{"name":"Rex","categoryId":1}');
    expect(created.status).toBe(201);
    const path = `/v2/pets/${(created.body as { id: number }).id}`;
    const patch = (key: string) => send(server, 'PATCH', path, key, { 'Content-Type': 'application/merge-patch+json', 'If-Match': '"1"' }, '{"name":"Max"}');
    expect(await patch(customer)).toMatchObject({ status: 403, body: { code: 'staff_only' } });
    expect(await patch(staff)).toMatchObject({ status: 200, body: { name: 'Max' } });
  });

  it('rotate: a new secret for the same id, plan and counters; the old one refused within 2 s; a ban stays', async () => {
    const old = createKey(env, '--plan', 'free', '--label', 'to rotate');
    const { id, prefix } = listJson(env).find((view) => view.label === 'to rotate')!;
    for (let i = 0; i < 3; i++) expect((await get(server, old)).status).toBe(200);
    const cachedBy = Date.now(); // by then the first of these requests had cached the key

    const rotated = runKeysCli(['rotate', String(id)], env);
    expect(rotated.status).toBe(0);
    expect(rotated.stdout).toMatch(new RegExp(`^${KEY.source}\\n$`)); // printed once, alone
    expect(rotated.stderr).toMatch(new RegExp(`^rotated key ${id} \\(free, customer, to rotate\\): the old secret is refused within 2 s`));
    const fresh = rotated.stdout.trim();
    expect(fresh).not.toBe(old);
    let remaining = NaN;
    for (;;) {
      const sentAt = Date.now();
      const answer = await get(server, old);
      if (answer.status === 401) break;
      // Served from the key cache until it expires: never by a request sent after that (see the revoke test).
      expect(answer.status).toBe(200);
      expect(sentAt - cachedBy).toBeLessThan(KEY_CACHE_TTL_MS);
      remaining = answer.remaining;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The old secret is refused from now on: it was not just cached away.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await get(server, old)).status).toBe(401);

    const after = await get(server, fresh);
    expect(after.status).toBe(200);
    // Same counters: the minute window went on counting (60 - 3 - polls while cached - this one).
    expect(after.remaining).toBe((Number.isNaN(remaining) ? 57 : remaining) - 1);
    const view = listJson(env).find((candidate) => candidate.id === id)!;
    expect(view).toMatchObject({ id, plan: 'free', label: 'to rotate', prefix: fresh.slice(0, 10), revokedAt: null });
    expect(view.prefix).not.toBe(prefix);

    // A banned key stays banned through a rotation (bans are kept by key id).
    const storage = await openStorage(env.DATABASE_URL);
    await storage.apiKeys.setBannedUntil(id, new Date(Date.now() + 60_000));
    await storage.close();
    const again = cli(['rotate', String(id)], env).trim();
    expect(await get(server, again)).toMatchObject({ status: 429, body: { code: 'key_temporarily_banned' } });
  });

  it("set-plan changes a key's plan; enterprise needs its limits", () => {
    createKey(env, '--plan', 'free', '--label', 'upgrade me');
    const { id } = listJson(env).find((view) => view.label === 'upgrade me')!;
    expect(cli(['set-plan', String(id), '--plan', 'enterprise', '--rpm', '700', '--rpd', '9000'], env)).toBe(
      `key ${id} is now on plan enterprise (servers apply it within 2 s)\n`,
    );
    expect(listJson(env).find((view) => view.id === id)).toMatchObject({ plan: 'enterprise', requestsPerMinute: 700, requestsPerDay: 9000 });
  });
});
