/**
 * `scaffold` writes one stub per operation and the registries; a handler
 * whose type names the versions it serves leaves a stub in the others (an
 * operation implemented in v2 may stay 501 in v1).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scaffold } from '../src';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'toolchain-scaffold-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const versions = [
  { name: 'v1', document: 'openapi/v1/openapi.yaml', operationIds: ['listOrders', 'getNote'] },
  { name: 'v2', document: 'openapi/v2/openapi.yaml', operationIds: ['listOrders', 'getNote', 'placeOrder'] },
];

it('writes a stub per operation, each serving every version that has it', () => {
  expect(scaffold(dir, versions).sort()).toEqual(['getNote', 'listOrders', 'placeOrder']);
  const index = readFileSync(path.join(dir, 'index.ts'), 'utf8');
  expect(index).toContain("export const v1 = {\n  getNote,\n  listOrders,\n} satisfies HandlerRegistry<'v1'>;");
  expect(index).toContain("import type { HandlerRegistry } from './types';");
});

it("a handler typed for some versions only (Handler<'x', 'v2'>) keeps a stub in the others", () => {
  writeFileSync(path.join(dir, 'listOrders.ts'), "export const listOrders: Handler<'listOrders', 'v2'> = async () => ({ status: 200, body: [] });\n");
  writeFileSync(path.join(dir, 'getNote.ts'), "export const getNote: Handler<'getNote', 'v1' | 'v2'> = async () => ({ status: 404 });\n");
  scaffold(dir, versions);
  const index = readFileSync(path.join(dir, 'index.ts'), 'utf8');
  expect(index).toContain("export const v1 = {\n  getNote,\n  listOrders: notImplementedHandler('listOrders'),\n} satisfies HandlerRegistry<'v1'>;");
  expect(index).toContain("export const v2 = {\n  getNote,\n  listOrders,\n  placeOrder,\n} satisfies HandlerRegistry<'v2'>;");
  expect(index).toContain("import { notImplementedHandler, type HandlerRegistry } from './types';");
});
