/**
 * API key administration, against the database the server uses (DATABASE_URL;
 * safe while the server runs).
 *
 *   npm run --silent keys -- create --plan free [--label NAME]   prints the key alone on stdout
 *   npm run --silent keys -- create --plan enterprise --rpm 5000 --rpd 2000000
 *   npm run keys -- list                                          no secrets are shown
 *   npm run keys -- revoke <id>                                   refused by servers within seconds
 *   npm run keys -- set-plan <id> --plan pro                      takes effect within seconds
 */
import '../src/check-runtime';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { keyChangesChannel } from '../src/shared-state/redis-state';
import { loadConfig } from '../src/config';
import { openStorage } from '../src/storage/open-storage';
import { checkPlanLimits, issueApiKey } from '../src/keys/api-key-service';
import { PLANS, type Plan, type Storage } from '../src/storage/storage';

const USAGE = `usage:
  keys create --plan ${PLANS.join('|')} [--label NAME] [--rpm N --rpd N]
  keys list
  keys revoke <id>
  keys set-plan <id> --plan ${PLANS.join('|')} [--rpm N --rpd N]`;

class UsageError extends Error {}

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`${flag} must be a positive integer`);
  return Number(value);
}

const PLAN_OPTIONS = { plan: { type: 'string' }, rpm: { type: 'string' }, rpd: { type: 'string' } } as const;

function planOf(values: { plan?: string; rpm?: string; rpd?: string }) {
  if (!PLANS.includes(values.plan as Plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  const plan = {
    plan: values.plan as Plan,
    requestsPerMinute: positiveInteger(values.rpm, '--rpm'),
    requestsPerDay: positiveInteger(values.rpd, '--rpd'),
  };
  checkPlanLimits(plan);
  return plan;
}

async function create(storage: Storage, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { ...PLAN_OPTIONS, label: { type: 'string' } } });
  const { key, record } = await issueApiKey(storage.apiKeys, { ...planOf(values), label: values.label });
  console.error(`created key ${record.id} (${record.plan}${record.label ? `, "${record.label}"` : ''}); it is shown only now:`);
  console.log(key);
}

async function list(storage: Storage): Promise<void> {
  const rows = (await storage.apiKeys.list()).map((key) => ({
    id: key.id,
    prefix: `${key.prefix}…`,
    plan: key.plan,
    label: key.label,
    'limits (rpm/rpd)': key.plan === 'enterprise' ? `${key.requestsPerMinute}/${key.requestsPerDay}` : 'plan',
    created: key.createdAt,
    revoked: key.revokedAt ?? '',
    'banned until': key.bannedUntil && Date.parse(key.bannedUntil) > Date.now() ? key.bannedUntil : '',
  }));
  if (rows.length === 0) console.log('no keys');
  else console.table(rows);
}

async function setPlan(storage: Storage, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args, options: PLAN_OPTIONS, allowPositionals: true });
  const id = positiveInteger(positionals[0], '<id>');
  if (id === undefined) throw new UsageError('set-plan needs the key id (see keys list)');
  const plan = planOf(values);
  const updated = await storage.apiKeys.setPlan(id, {
    plan: plan.plan,
    requestsPerMinute: plan.requestsPerMinute ?? null,
    requestsPerDay: plan.requestsPerDay ?? null,
  });
  if (!updated) throw new UsageError(`no key with id ${id}`);
  await announceChange(id);
  console.log(`key ${id} is now on plan ${plan.plan}`);
}

async function revoke(storage: Storage, args: string[]): Promise<void> {
  const id = positiveInteger(args[0], '<id>');
  if (id === undefined) throw new UsageError('revoke needs the key id (see keys list)');
  if (!(await storage.apiKeys.revoke(id))) throw new UsageError(`no key with id ${id}`);
  await announceChange(id);
  console.log(`key ${id} revoked`);
}

/**
 * With REDIS_URL set, running servers drop their cached copy of the key at
 * once; without it they pick the change up when their 2 s cache expires.
 */
async function announceChange(keyId: number): Promise<void> {
  const { redisUrl, redisKeyPrefix } = loadConfig(process.env);
  if (!redisUrl) return;
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    await redis.publish(keyChangesChannel(redisKeyPrefix), String(keyId));
  } catch (error) {
    console.error(`keys: servers will see the change within 2 s (could not notify them through Redis: ${(error as Error).message})`);
  } finally {
    redis.disconnect();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  const commands: Record<string, (storage: Storage, args: string[]) => Promise<void>> = {
    create,
    list,
    revoke,
    'set-plan': setPlan,
  };
  const run = command === undefined ? undefined : commands[command];
  if (!run) throw new UsageError(command ? `unknown command "${command}"` : 'missing command');
  const storage = await openStorage(loadConfig(process.env).databaseUrl);
  try {
    await run(storage, args);
  } finally {
    await storage.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`keys: ${(error as Error).message}`);
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) console.error(USAGE);
  process.exit(error instanceof UsageError ? 2 : 1);
});
