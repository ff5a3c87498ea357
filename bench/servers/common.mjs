// Shared by the baseline servers (plain JavaScript, run with plain `node`, no
// loader, so their RSS is comparable with the compiled project server).
import { readFileSync } from 'node:fs';

/** The pets the orchestrator seeded into the project's database, as the API returns them. */
export function loadPets() {
  const file = process.env.BENCH_PETS_FILE;
  if (!file) throw new Error('BENCH_PETS_FILE is not set');
  return JSON.parse(readFileSync(file, 'utf8'));
}

export const port = Number(process.env.PORT ?? 0);
export const host = process.env.HOST ?? '127.0.0.1';

/** What createPet answers: the new pet with its id (the baselines keep nothing). */
export const newPet = (id, body) => ({ id, name: body.name, categoryId: body.categoryId, status: body.status ?? 'available' });

/** Listen, then stop on SIGTERM (the orchestrator samples RSS from /proc while we run). */
export function serve(server) {
  server.listen(port, host);
  server.once('listening', () => process.stdout.write(`listening ${host}:${server.address().port}\n`));
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
