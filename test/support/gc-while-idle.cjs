// Preloaded into a server under test (`--expose-gc --require`): collects
// garbage every 500 ms while it idles, so objects dropped during traffic
// (better-sqlite3 statements among them) are finalized between requests,
// where the Node 24.19+ / better-sqlite3 <= 12 abort happened.
if (typeof globalThis.gc === 'function') setInterval(() => globalThis.gc(), 500).unref();
