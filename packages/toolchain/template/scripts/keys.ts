/**
 * `npm run keys -- create [--label TEXT]`: prints a new API key as the last line of stdout.
 * `npm run keys -- list`: every key's id, label, creation and revocation (never the key).
 * `npm run keys -- revoke <id>`: the server refuses that key from its next request.
 * The keys are in KEYS_FILE (data/keys.jsonl), where the server reads them.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../src/app';
import { keyStore } from '../src/keys';
import { settingsOf } from '../src/settings';

const USAGE = 'usage: npm run keys -- create [--label TEXT] | list | revoke <id>';

function main(): number {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { label: { type: 'string' } } });
  const keys = keyStore(path.resolve(ROOT, settingsOf(process.env).keysFile));
  const [command, id] = positionals;
  switch (command) {
    case 'create': {
      const created = keys.create(values.label);
      console.log(`created key ${created.id}; it is shown only once (send it as the document's security schemes say):`);
      console.log(created.key);
      return 0;
    }
    case 'list':
      for (const record of keys.list())
        console.log(`${record.id}\t${record.createdAt}\t${record.revokedAt ? `revoked ${record.revokedAt}` : 'active'}\t${record.label}`);
      return 0;
    case 'revoke':
      if (id === undefined) break;
      if (!keys.revoke(id)) {
        console.error(`no key ${id} (npm run keys -- list shows them)`);
        return 1;
      }
      console.log(`revoked ${id}`);
      return 0;
  }
  console.error(USAGE);
  return 2;
}

try {
  process.exitCode = main();
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 2;
}
