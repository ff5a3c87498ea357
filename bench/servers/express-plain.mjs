// Baseline B: plain Express 5 (default settings) with res.json, same data, no
// validation, no security headers, no rate limits: the floor of the framework.
import http from 'node:http';
import express from 'express';
import { loadPets, newPet, serve } from './common.mjs';

const pets = loadPets();
const byId = new Map(pets.map((pet) => [pet.id, pet]));
let nextId = pets.length + 1;

const app = express();
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.get('/v1/pets', (req, res) => {
  res.json(pets.slice(0, req.query.limit === undefined ? 20 : Number(req.query.limit)));
});
app.post('/v1/pets', express.json(), (req, res) => {
  res.status(201).json(newPet(nextId++, req.body));
});
app.get('/v1/pets/:petId', (req, res) => {
  const pet = byId.get(Number(req.params.petId));
  if (pet) res.json(pet);
  else res.status(404).json({ code: 'not_found', message: 'no such pet', status: 404 });
});
serve(http.createServer(app));
