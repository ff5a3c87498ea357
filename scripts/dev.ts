/**
 * `npm run dev [-- --mock]`: the contract and the code, live.
 *
 * Serves the API in development on the embedded database (as `npm start`:
 * the first key is created and printed once), ready in a few seconds (tsx,
 * no `tsc` build), and watches every contract document and src/:
 *
 * - a contract save: check it (YAML, `redocly lint`), regenerate generated/,
 *   scaffold stubs for new operations (never overwriting a handler), reload
 *   the server with it (new operations answer 501, or their examples with
 *   --mock; /docs shows it). A broken contract is reported with file, line
 *   and rule, and the server keeps the last good one until a good save;
 * - a source save: the server reloads (the database, and so the keys, stay);
 * - types are checked beside it, incrementally; errors never stop the server;
 * - Ctrl-C stops the server, the checker and the watchers, and frees the port.
 *
 * The pieces are in scripts/dev/; docs/dev-loop.md describes the loop.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkDocuments, formatProblem, stopLints } from './dev/contract-check';
import { applyContract, renderContract } from './dev/contract-apply';
import { ContractSnapshot, findContractDocuments, isContractChange } from './dev/contract-documents';
import { bold, event, timeOf, took } from './dev/log';
import { DevServer } from './dev/server-process';
import { TypeChecker } from './dev/typecheck';
import { ContentWatcher } from './dev/watch';

const ROOT = path.resolve(__dirname, '..');
/** The last good contract, as the server reads it (OPENAPI_DIR); kept across sessions. */
const SERVED_CONTRACT = path.join(ROOT, 'dist', 'dev', 'contract');
/** Events closer than this are one change (an editor's save is often several writes). */
const SETTLE_MS = 60;
const MAX_PROBLEMS_SHOWN = 15;

const { values: options } = parseArgs({
  options: { mock: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
});
if (options.help) {
  console.log(`npm run dev [-- --mock]

Serves the API (http://127.0.0.1:$PORT, default 3000) on the embedded database and
reloads it on every save of a contract document (openapi/**/openapi.yaml) or of src/.
  --mock   operations not implemented yet answer with the contract's examples (as npm run mock)
Environment: as npm start (PORT, HOST, DATABASE_URL, LOG_LEVEL, ...); LOG_FORMAT defaults to pretty.`);
  process.exit(0);
}

const packageJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { config?: { serverNodeFlags?: string } };
const server = new DevServer(
  ROOT,
  {
    ...process.env,
    NODE_ENV: 'development',
    LOG_FORMAT: process.env['LOG_FORMAT'] || 'pretty',
    // A reload should not wait long for a slow request.
    SHUTDOWN_TIMEOUT_SECONDS: process.env['SHUTDOWN_TIMEOUT_SECONDS'] || '2',
    MOCK_RESPONSES: options.mock ? 'true' : process.env['MOCK_RESPONSES'] || 'false',
    OPENAPI_DIR: SERVED_CONTRACT,
  },
  (packageJson.config?.serverNodeFlags ?? '').split(' ').filter(Boolean),
);
const checker = new TypeChecker(ROOT);
checker.serverNote = () =>
  server.running ? 'the server keeps running, response validation catches what they break' : 'the server is not running (its message above)';

/** The contract as it last passed the checks (what the server serves), and its operations. */
let lastGood: ContractSnapshot | undefined;
let operations: string[] = [];
let documents: string[] = [];
let brokenSince: Date | undefined;

// ---- changes, settled and handled one batch at a time --------------------

const pending = { contract: new Set<string>(), source: new Set<string>(), created: new Set<string>(), since: 0 };
let settleTimer: NodeJS.Timeout | undefined;
let busy = false;
let stopping = false;

const watcher = new ContentWatcher(ROOT, ['openapi', 'src'], (file, kind) => {
  const set = isContractChange(file) ? pending.contract : file.startsWith('src/') ? pending.source : undefined;
  if (!set) return;
  if (kind === 'deleted' && pending.created.delete(file)) {
    set.delete(file); // came and went within one save: an editor's temporary file
  } else {
    set.add(file);
    if (kind === 'created') pending.created.add(file);
  }
  pending.since ||= performance.now();
  clearTimeout(settleTimer);
  settleTimer = setTimeout(() => void drain(), SETTLE_MS);
});

async function drain(): Promise<void> {
  if (busy || stopping) return;
  busy = true;
  try {
    while (!stopping && (pending.contract.size > 0 || pending.source.size > 0)) {
      const batch = { contract: [...pending.contract], source: [...pending.source], since: pending.since };
      pending.contract.clear();
      pending.source.clear();
      pending.created.clear();
      pending.since = 0;
      if (batch.contract.length === 0 && batch.source.length === 0) continue;
      checker.hold();
      try {
        await handle(batch);
      } finally {
        checker.release();
      }
    }
  } catch (error) {
    event(`unexpected: ${(error as Error).stack ?? error}`, 'error');
  } finally {
    busy = false;
  }
}

const list = (files: string[]): string => (files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`);

async function handle(batch: { contract: string[]; source: string[]; since: number }): Promise<void> {
  let reason: string | undefined;
  if (batch.contract.length > 0) {
    const before = { snapshot: lastGood, operations };
    if (await checkContract(batch.contract)) {
      reason = describeOperations(before.operations);
      await reload(reason, batch.since, before.snapshot);
      return;
    }
  }
  if (batch.source.length > 0) await reload(`${list(batch.source)} changed`, batch.since);
}

/** `+adoptPet (answers 501 until implemented)`, for the reload line. */
function describeOperations(before: string[]): string {
  const added = operations.filter((id) => !before.includes(id));
  const removed = before.filter((id) => !operations.includes(id));
  const parts = [
    ...(added.length > 0 ? [`new ${added.join(', ')} (${options.mock ? 'answers its example' : 'answers 501'} until implemented)`] : []),
    ...(removed.length > 0 ? [`removed ${removed.join(', ')}`] : []),
  ];
  return `the new contract${parts.length > 0 ? `: ${parts.join('; ')}` : ''}`;
}

// ---- the contract -------------------------------------------------------

/**
 * Checks every contract document; when none has a blocking problem,
 * regenerates generated/, scaffolds the new operations and takes the new
 * last good contract. Prints one line (and the problems). Whether it applied.
 */
async function checkContract(changed: string[] | 'start'): Promise<boolean> {
  const started = performance.now();
  const found = findContractDocuments(ROOT);
  let head: string;
  if (changed === 'start') {
    head = `contract ${found.join(', ') || '(none)'}`;
  } else {
    const added = found.filter((file) => !documents.includes(file));
    const gone = documents.filter((file) => !found.includes(file));
    const edited = changed.filter((file) => !added.includes(file) && !gone.includes(file));
    head = [
      ...(edited.length > 0 ? [`${list(edited)} changed`] : []),
      ...(added.length > 0 ? [`${list(added)} added`] : []),
      ...(gone.length > 0 ? [`${list(gone)} removed`] : []),
    ].join(', ');
  }
  documents = found;
  if (documents.length === 0) {
    event(
      `${head}: no contract document (openapi/**/openapi.yaml) found; ${lastGood ? 'the server keeps the last good contract' : 'nothing to serve'}`,
      'error',
    );
    return false;
  }
  // The lint (another process) and the generator (here) at once; what the generator made is used only if the lint passes.
  const [problems, rendered] = await Promise.all([checkDocuments(ROOT, documents), renderContract(ROOT).catch((error: unknown) => error as Error)]);
  if (stopping) return false;
  const blocking = problems.filter((problem) => problem.blocking);
  const advisory = problems.filter((problem) => !problem.blocking);
  const shown = [...blocking, ...advisory].slice(0, MAX_PROBLEMS_SHOWN).flatMap(formatProblem);
  if (problems.length > MAX_PROBLEMS_SHOWN) shown.push(`... and ${problems.length - MAX_PROBLEMS_SHOWN} more (npm run lint:api lists them all)`);

  if (blocking.length > 0 || rendered instanceof Error) {
    brokenSince ??= new Date();
    const count =
      blocking.length > 0 ? `${blocking.length} error${blocking.length === 1 ? '' : 's'}` : `the generator refused it: ${(rendered as Error).message}`;
    const keeps = lastGood ? `the server keeps the contract of ${timeOf(lastGood.takenAt)}` : 'nothing is served until it is fixed';
    event(`${head}: ${count}, not applied; ${keeps}; the next good save applies it`, 'error', shown);
    return false;
  }
  const applied = await applyContract(ROOT, rendered);
  for (const file of [...applied.scaffolded, 'src/service/handlers/index.ts']) watcher.remember(file);
  lastGood = ContractSnapshot.take(ROOT);
  operations = applied.operationIds;
  const steps = [
    brokenSince ? 'fixed' : 'checked',
    advisory.length > 0
      ? `${advisory.length} lint problem${advisory.length === 1 ? '' : 's'} (not blocking; npm run lint:api fails on them)`
      : 'no lint problems',
    applied.regenerated.length > 0 ? `regenerated ${applied.regenerated.join(', ')}` : 'generated/ unchanged',
    ...(applied.scaffolded.length > 0 ? [`scaffolded ${applied.scaffolded.join(', ')}`] : []),
    ...(applied.orphans.length > 0 ? [`${applied.orphans.join(', ')} match no operation (delete or restore the operation)`] : []),
  ];
  brokenSince = undefined;
  event(`${head}: ${steps.join(', ')} (${took(performance.now() - started)})`, advisory.length > 0 ? 'warn' : 'ok', advisory.length > 0 ? shown : []);
  return true;
}

// ---- the server ---------------------------------------------------------

/**
 * Restarts the server on the last good contract and prints how long the
 * change took to be served. When a new contract keeps the server from
 * starting, goes back to `fallback` (the previous one).
 */
async function reload(reason: string, since: number, fallback?: ContractSnapshot): Promise<void> {
  if (!lastGood) {
    event(`${reason}: not serving until the contract is fixed`, 'warn');
    return;
  }
  await server.stop();
  if (stopping) return;
  lastGood.writeTo(SERVED_CONTRACT);
  const result = await server.start();
  if (stopping) return;
  if (result.ok) {
    event(`${reason}: reloaded in ${took(performance.now() - since)} (server start ${took(result.ms)}), ${result.url}`, 'ok');
    return;
  }
  const exit = `exit code ${result.code ?? result.signal}`;
  if (fallback && fallback !== lastGood) {
    const refused = lastGood;
    lastGood = fallback;
    lastGood.writeTo(SERVED_CONTRACT);
    const again = await server.start();
    if (stopping) return;
    if (again.ok) {
      brokenSince = new Date();
      event(
        `the server refused the new contract (${exit}, its message above): serving the contract of ${timeOf(fallback.takenAt)} again, ${again.url}; fix it and save`,
        'error',
      );
      return;
    }
    lastGood = refused; // the contract was not the cause
  }
  event(`${reason}: the server did not start (${exit}, its message above); fix it and save: it starts on the next change`, 'error');
}

server.onCrash = (code, signal) => {
  if (!stopping) event(`the server stopped (exit code ${code ?? signal}, its message above); it starts again on the next save`, 'error');
};

// ---- start and stop -----------------------------------------------------

async function main(): Promise<void> {
  busy = true; // changes during the start are handled after it
  watcher.start();
  event(
    `npm run dev${options.mock ? ' --mock' : ''}: checking the contract, then serving on ${process.env['DATABASE_URL'] || 'the embedded database (data/pets.db)'}`,
  );
  if (!(await checkContract('start'))) {
    lastGood = ContractSnapshot.readBack(SERVED_CONTRACT);
    if (lastGood) event('serving the last good contract of an earlier npm run dev until the contract is fixed', 'warn');
  }
  if (stopping) return;
  if (lastGood) {
    lastGood.writeTo(SERVED_CONTRACT);
    const result = await server.start();
    if (stopping) return;
    if (result.ok) {
      event(
        // performance.now(): since this process started (loading the dev loop itself included).
        `${bold('ready')} in ${took(performance.now())}: ${result.url} (docs ${result.url}/docs)${options.mock ? ', mock mode' : ''}; ` +
          `watching ${documents.join(', ')} and src/; types are checked beside it; Ctrl-C stops`,
        'ok',
      );
    } else {
      event(`the server did not start (exit code ${result.code ?? result.signal}, its message above); fix it and save: it starts on the next change`, 'error');
    }
  }
  // After the server is up: the first check is the heavy one, and this machine's cores are few.
  checker.start();
  busy = false;
  void drain();
}

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) {
    // A second Ctrl-C: now.
    server.kill();
    process.exit(1);
  }
  stopping = true;
  event(`${signal}: stopping the server, the type checker and the watchers`);
  clearTimeout(settleTimer);
  watcher.close();
  stopLints();
  await Promise.all([server.close(), checker.stop()]);
  event('stopped');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGHUP', () => void shutdown('SIGHUP'));

main().catch((error: unknown) => {
  event(`npm run dev failed: ${(error as Error).stack ?? error}`, 'error');
  void shutdown('SIGTERM');
});
