/**
 * The adoption invariant over the whole database the server uses
 * (DATABASE_URL): every pet's status agrees with its orders (the rule:
 * src/service/storage/adoption-invariant.ts). The test suite, the crash test
 * and the soak run it; an operator can run it after an incident.
 *
 * Exit codes: 0 it holds; 1 it is broken (one line per violation on stdout),
 * or the database could not be read (one line on stderr).
 */
import '../src/runtime/check-runtime';
import { loadConfig } from '../src/config';
import { openStorage, type Storage } from '../src/service/storage';

async function main(): Promise<number> {
  let storage: Storage | undefined;
  try {
    storage = await openStorage(loadConfig(process.env).databaseUrl);
    const violations = await storage.adoptionViolations();
    for (const violation of violations) console.log(violation);
    console.error(violations.length === 0 ? 'adoption invariant: holds' : `adoption invariant: ${violations.length} violation(s)`);
    return violations.length === 0 ? 0 : 1;
  } catch (error) {
    console.error(`check:adoption: error: ${(error as Error).message}`);
    return 1;
  } finally {
    await storage?.close().catch(() => {});
  }
}

void main().then((code) => process.exit(code));
