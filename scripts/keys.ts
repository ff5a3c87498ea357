/**
 * API key administration, against the database the server uses (DATABASE_URL;
 * safe while servers run). `npm run --silent keys -- --help` lists the
 * commands; `keys <command> --help` explains one.
 *
 * Exit codes: 0 done; 2 the command was refused as asked (unknown command or
 * option, bad value, no such key), nothing changed; 1 it could not be done
 * (configuration, database). Errors are one line on stderr, never a stack.
 */
import '../src/runtime/check-runtime';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Redis } from 'ioredis';
import { keyChangesChannel } from '../src/service/shared-state';
import { FIXED_SETTINGS, loadConfig } from '../src/config';
import { openStorage } from '../src/service/storage';
import { ApiKeyInputError, checkPlanLimits, issueApiKey, rotateApiKey } from '../src/service/keys';
import { formatKeyDetails, formatKeyTable, keyView } from './lib/key-listing';
import { ROLES, type ApiKeyRecord, type Role, type Storage } from '../src/service/storage';
import { PLANS, type Plan } from '../src/service/plans';

/** Refused as asked: exit code 2. */
class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

interface Command {
  /** Arguments and options, after `keys <name>`. */
  synopsis: string;
  summary: string;
  /** More about it, for `keys <name> --help`. */
  details: string;
  options: Options;
  /** Names of the positional arguments, all required. */
  positionals: string[];
  /** Checks the input (before any database is opened) and returns the work to do. */
  prepare(values: Values, positionals: string[]): (storage: Storage) => Promise<void>;
}

const SECONDS_TO_TAKE_EFFECT = FIXED_SETTINGS.keyCacheTtlMs / 1000;
const PLAN_OPTIONS: Options = { plan: { type: 'string' }, rpm: { type: 'string' }, rpd: { type: 'string' } };
const JSON_OPTION: Options = { json: { type: 'boolean' } };
const PLAN_HELP = `  --plan PLAN   ${PLANS.join(', ')}
  --rpm N       requests per minute (enterprise only, and required for it)
  --rpd N       requests per day (enterprise only, and required for it)`;

function positiveInteger(value: string, name: string): number {
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${name} must be a positive integer, got "${value}"`);
  }
  return Number(value);
}

const keyId = (positionals: string[]): number => positiveInteger(positionals[0]!, '<id>');

function planOf(values: Values) {
  const plan = values['plan'] as string | undefined;
  if (plan === undefined) throw new UsageError(`--plan is required (one of ${PLANS.join(', ')})`);
  if (!PLANS.includes(plan as Plan)) throw new UsageError(`unknown plan "${plan}": --plan must be one of ${PLANS.join(', ')}`);
  const limit = (flag: 'rpm' | 'rpd') => {
    const value = values[flag] as string | undefined;
    return value === undefined ? undefined : positiveInteger(value, `--${flag}`);
  };
  const limits = { plan: plan as Plan, requestsPerMinute: limit('rpm'), requestsPerDay: limit('rpd') };
  checkPlanLimits(limits);
  return limits;
}

function roleOf(values: Values): Role {
  const role = (values['role'] as string | undefined) ?? 'customer';
  if (!ROLES.includes(role as Role)) throw new UsageError(`unknown role "${role}": --role must be one of ${ROLES.join(', ')}`);
  return role as Role;
}

const describe = (record: ApiKeyRecord): string => `${record.plan}, ${record.role}${record.label ? `, ${record.label}` : ''}`;

const COMMANDS: Record<string, Command> = {
  create: {
    synopsis: '--plan PLAN [--role ROLE] [--label NAME] [--rpm N --rpd N]',
    summary: 'issue a key; prints it once, alone on stdout',
    details: `The key is shown only now (only its hash is stored).\n\n${PLAN_HELP}\n  --role ROLE   ${ROLES.join(' (default), ')}: staff see and change every order and change pets\n  --label NAME  who or what the key is for`,
    options: { ...PLAN_OPTIONS, role: { type: 'string' }, label: { type: 'string' } },
    positionals: [],
    prepare(values) {
      const plan = planOf(values);
      const role = roleOf(values);
      return async (storage) => {
        const { key, record } = await issueApiKey(storage.apiKeys, { ...plan, role, label: values['label'] as string | undefined });
        console.error(`created key ${record.id} (${describe(record)}); it is shown only now:`);
        console.log(key);
      };
    },
  },
  list: {
    synopsis: '[--json]',
    summary: 'every key: prefix, plan, role, limits, dates, ban, label (no secrets)',
    details: `  --json        a JSON array, for scripts (dates in ISO 8601; null for none)`,
    options: JSON_OPTION,
    positionals: [],
    prepare(values) {
      return async (storage) => {
        const now = new Date();
        const views = (await storage.apiKeys.list()).map((record) => keyView(record, now));
        if (values['json']) console.log(JSON.stringify(views, null, 2));
        else if (views.length === 0) console.log('no keys (create one: keys create --plan free)');
        else console.log(formatKeyTable(views));
      };
    },
  },
  show: {
    synopsis: '<id> [--json]',
    summary: 'one key (no secret)',
    details: `  --json        a JSON object, for scripts`,
    options: JSON_OPTION,
    positionals: ['id'],
    prepare(values, positionals) {
      const id = keyId(positionals);
      return async (storage) => {
        const record = await storage.apiKeys.get(id);
        if (!record) throw new UsageError(`no key with id ${id}`);
        const view = keyView(record, new Date());
        console.log(values['json'] ? JSON.stringify(view, null, 2) : formatKeyDetails(view));
      };
    },
  },
  rotate: {
    synopsis: '<id>',
    summary: 'a new secret for the same key (id, plan, limits, counters); prints it once',
    details:
      `The new key is printed alone on stdout, once. The old one is refused within ${SECONDS_TO_TAKE_EFFECT} s ` +
      `(at once with REDIS_URL set). Rate-limit counters and bans stay with the key.`,
    options: {},
    positionals: ['id'],
    prepare(_values, positionals) {
      const id = keyId(positionals);
      return async (storage) => {
        const { key, record } = await rotateApiKey(storage.apiKeys, id);
        const when = await announceChange(id);
        console.error(`rotated key ${id} (${describe(record)}): the old secret is refused ${when}; the new one is shown only now:`);
        console.log(key);
      };
    },
  },
  revoke: {
    synopsis: '<id>',
    summary: 'refuse the key from now on',
    details: `Servers refuse it within ${SECONDS_TO_TAKE_EFFECT} s (at once with REDIS_URL set). It cannot be undone.`,
    options: {},
    positionals: ['id'],
    prepare(_values, positionals) {
      const id = keyId(positionals);
      return async (storage) => {
        if (!(await storage.apiKeys.revoke(id))) throw new UsageError(`no key with id ${id}`);
        const when = await announceChange(id);
        console.log(`key ${id} revoked: servers refuse it ${when}`);
      };
    },
  },
  'set-plan': {
    synopsis: '<id> --plan PLAN [--rpm N --rpd N]',
    summary: "change a key's plan",
    details: `Servers apply it within ${SECONDS_TO_TAKE_EFFECT} s (at once with REDIS_URL set).\n\n${PLAN_HELP}`,
    options: PLAN_OPTIONS,
    positionals: ['id'],
    prepare(values, positionals) {
      const id = keyId(positionals);
      const plan = planOf(values);
      return async (storage) => {
        const updated = await storage.apiKeys.setPlan(id, {
          plan: plan.plan,
          requestsPerMinute: plan.requestsPerMinute ?? null,
          requestsPerDay: plan.requestsPerDay ?? null,
        });
        if (!updated) throw new UsageError(`no key with id ${id}`);
        const when = await announceChange(id);
        console.log(`key ${id} is now on plan ${plan.plan} (servers apply it ${when})`);
      };
    },
  },
};

const usageOf = (name: string): string => `keys ${name} ${COMMANDS[name]!.synopsis}`.trimEnd();

const synopses = Object.keys(COMMANDS).map((name) => usageOf(name).slice('keys '.length));
const OVERVIEW = `Manage API keys in the database of DATABASE_URL (safe while servers run).

usage: npm run --silent keys -- <command> [arguments]

commands:
${Object.values(COMMANDS)
  .map((command, index) => `  ${synopses[index]!.padEnd(Math.max(...synopses.map((text) => text.length)))}  ${command.summary}`)
  .join('\n')}

keys <command> --help explains one. Exit codes: 0 done, 2 refused as asked
(nothing changed), 1 could not be done (configuration, database).`;

const helpOf = (name: string): string => `usage: ${usageOf(name)}\n\n${COMMANDS[name]!.summary}.\n${COMMANDS[name]!.details}`;

/**
 * With REDIS_URL set, running servers drop their cached copy of the key at
 * once; without it they pick the change up when their key cache expires.
 * Resolves with when the change takes effect, in words.
 */
async function announceChange(id: number): Promise<string> {
  const later = `within ${SECONDS_TO_TAKE_EFFECT} s`;
  const { redisUrl, redisKeyPrefix } = loadConfig(process.env);
  if (!redisUrl) return later;
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0 });
  redis.on('error', () => {}); // reported below, once
  try {
    await redis.connect();
    await redis.publish(keyChangesChannel(redisKeyPrefix), String(id));
    return 'at once';
  } catch (error) {
    console.error(`keys: could not notify servers through Redis (${messageOf(error)}); they see the change ${later}`);
    return later;
  } finally {
    redis.disconnect();
  }
}

/** Parses `keys <command> ...`: the work to do, or the text to print (help). */
function parse(argv: string[]): { help: string } | { work: (storage: Storage) => Promise<void> } {
  const [name, ...args] = argv;
  if (name === undefined) throw new UsageError('missing command (see keys --help)');
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? args[0] : undefined;
    if (topic !== undefined && !Object.hasOwn(COMMANDS, topic)) throw new UsageError(`unknown command "${topic}" (see keys --help)`);
    return { help: topic === undefined ? OVERVIEW : helpOf(topic) };
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    throw new UsageError(`unknown command "${name}": use one of ${Object.keys(COMMANDS).join(', ')} (see keys --help)`);
  }
  const command = COMMANDS[name]!;
  const { values, positionals } = parseArgs({
    args,
    options: { ...command.options, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return { help: helpOf(name) };
  const missing = command.positionals[positionals.length];
  if (missing !== undefined) throw new UsageError(`missing <${missing}>: ${usageOf(name)}`);
  const extra = positionals[command.positionals.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}": ${usageOf(name)}`);
  return { work: command.prepare(values, positionals) };
}

/** An error's message on one line (some, like a refused connection's AggregateError, have none of their own). */
function messageOf(error: unknown): string {
  const { message, code, errors } = error as { message?: string; code?: string; errors?: unknown[] };
  const text = message || (errors?.length ? errors.map(messageOf).join('; ') : '') || code || String(error);
  return text
    .replace(/:\s*\n\s*/g, ': ')
    .replace(/\s*\n\s*/g, '; ')
    .trim();
}

const isRefusal = (error: unknown): boolean =>
  error instanceof UsageError || error instanceof ApiKeyInputError || /^ERR_PARSE_ARGS_/.test((error as { code?: string }).code ?? '');

async function main(argv: string[]): Promise<number> {
  let storage: Storage | undefined;
  try {
    const parsed = parse(argv);
    if ('help' in parsed) {
      console.log(parsed.help);
      return 0;
    }
    storage = await openStorage(loadConfig(process.env).databaseUrl);
    await parsed.work(storage);
    return 0;
  } catch (error) {
    if (isRefusal(error)) {
      console.error(`keys: ${messageOf(error)}`);
      return 2;
    }
    console.error(`keys: error: ${messageOf(error)}`);
    return 1;
  } finally {
    await storage?.close().catch(() => {});
  }
}

// Exit at once: a pool still trying to reach an unreachable database must not hold the process.
void main(process.argv.slice(2)).then((code) => process.exit(code));
