// The project's server exactly as `node dist/src/server.js` starts it, built
// through the same composition root with the layers named in LEDGER_LAYERS
// (comma-separated) replaced by the stand-ins of bench/ledger-stand-ins.ts:
// the cost ledger of `npm run bench` (bench/ledger.ts) runs one per layer.
// The product code is loaded from dist/ (compiled, as it ships); only this
// file and the stand-ins go through tsx.
import { parseLayers, standInHooks } from '../ledger-stand-ins';

const { startServer } = require('../../dist/src/server.js') as typeof import('../../src/server');
const { compose } = require('../../dist/src/compose.js') as typeof import('../../src/compose');

const hooks = standInHooks(parseLayers(process.env['LEDGER_LAYERS']));
startServer(process.env, (config) => compose(config, { phaseHooks: hooks })).catch((error: unknown) => {
  console.error(`failed to start: ${(error as Error).message}`);
  process.exit(1);
});
