// The naive stack: what a first version of the project would be. Express 5 +
// helmet + express-rate-limit + express-openapi-validator on the same
// openapi/v1/openapi.yaml, every one with its default options, serving the same
// JSON from memory. One departure from the defaults: express-rate-limit's
// default limit is 5 requests a minute, so `limit` is raised out of reach (the
// limiter still counts every request in its default MemoryStore and sets its
// default draft-6 and legacy headers); otherwise only 429s would be measured.
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import helmet from 'helmet';
import { rateLimit } from 'express-rate-limit';
import * as OpenApiValidator from 'express-openapi-validator';
import { loadPets, newPet, serve } from './common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pets = loadPets();
const byId = new Map(pets.map((pet) => [pet.id, pet]));
let nextId = pets.length + 1;

const app = express();
app.use(helmet());
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.use(rateLimit({ limit: 1_000_000_000 }));
// express-openapi-validator parses no bodies itself.
app.use(express.json());
app.use(OpenApiValidator.middleware({ apiSpec: path.join(root, 'openapi/v1/openapi.yaml') }));
app.get('/v1/pets', (req, res) => {
  res.json(pets.slice(0, req.query.limit === undefined ? 20 : Number(req.query.limit)));
});
app.post('/v1/pets', (req, res) => {
  res.status(201).json(newPet(nextId++, req.body));
});
app.get('/v1/pets/:petId', (req, res) => {
  const pet = byId.get(Number(req.params.petId));
  if (pet) res.json(pet);
  else res.status(404).json({ code: 'not_found', message: 'no such pet', status: 404 });
});
app.use((err, _req, res, _next) => {
  const status = err.status ?? 500;
  res.status(status).json({ code: status === 500 ? 'internal_error' : 'invalid_request', message: err.message, status });
});
serve(http.createServer(app));
