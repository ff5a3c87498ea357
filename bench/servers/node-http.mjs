// Baseline A: bare node:http serving the same JSON from memory, the floor of Node.
import http from 'node:http';
import { loadPets, newPet, serve } from './common.mjs';

const pets = loadPets();
const byId = new Map(pets.map((pet) => [pet.id, pet]));
let nextId = pets.length + 1;

function send(res, status, body) {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path === '/v1/pets') {
    if (req.method === 'GET') {
      const limit = q === -1 ? null : new URLSearchParams(url.slice(q + 1)).get('limit');
      return send(res, 200, pets.slice(0, limit === null ? 20 : Number(limit)));
    }
    if (req.method === 'POST') {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        try {
          send(res, 201, newPet(nextId++, JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        } catch {
          send(res, 400, { code: 'invalid_request', message: 'bad JSON', status: 400 });
        }
      });
      return;
    }
  }
  const match = /^\/v1\/pets\/(\d+)$/.exec(path);
  if (match && req.method === 'GET') {
    const pet = byId.get(Number(match[1]));
    return pet ? send(res, 200, pet) : send(res, 404, { code: 'not_found', message: 'no such pet', status: 404 });
  }
  if (path === '/healthz') return send(res, 200, { status: 'ok' });
  send(res, 404, { code: 'not_found', message: 'unknown route', status: 404 });
});
serve(server);
