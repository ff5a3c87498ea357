// The project's server exactly as `node dist/src/server.js` starts it, with the
// layers named in LEDGER_BYPASS (comma-separated) replaced by stand-ins: the
// cost ledger of `npm run bench` (bench/ledger.ts) runs one per layer.
const { startServer } = require('../../dist/src/server.js');
const { parseLayerBypass } = require('../../dist/src/pipeline/layer-bypass.js');

startServer(process.env, { bypass: parseLayerBypass(process.env.LEDGER_BYPASS) }).catch((error) => {
  console.error(`failed to start: ${error.message}`);
  process.exit(1);
});
