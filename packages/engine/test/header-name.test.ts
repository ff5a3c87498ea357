/**
 * headerName (src/response/header-name.ts): the header names the
 * engine writes on every response stay one byte per character whatever
 * contract was loaded first. The premise is checked in a child process of its
 * own (a fresh string table): after a YAML document holding one character
 * beyond Latin-1 declares a header, a literal of that name is the document's
 * two-byte string, and Node then builds a two-byte response head.
 */
import { spawnSync } from 'node:child_process';
import { headerName } from '../src/response/header-name';
import path from 'node:path';

/** The package's folder: the probes import its sources. */
const PACKAGE_ROOT = path.resolve(__dirname, '..');

// The name is only ever put together at run time: a literal of it in this script would be internalized, one-byte, before the YAML is parsed.
const REPRESENTATION_PROBE = `
import v8 from 'node:v8';
import { parse } from 'yaml';
import { headerName } from './src/response/header-name.ts';
const name = ['X', 'Probe', 'Header', 'Name'].join('-');
parse('info:\\n  description: "taken from <\\u2026>"\\nheaders:\\n  ' + name + ': {}\\n');
const literal = new Function('return "' + name + '"')();
const named = headerName(literal);
console.log(JSON.stringify({ equal: literal === named, literal: v8.isStringOneByteRepresentation(literal), named: v8.isStringOneByteRepresentation(named) }));
`;

describe('headerName', () => {
  it('is a one-byte string of the name, where a literal of a name a contract declared after a character beyond Latin-1 is two-byte', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', REPRESENTATION_PROBE], { cwd: PACKAGE_ROOT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`the probe failed: ${run.stderr}`);
    expect(JSON.parse(run.stdout)).toEqual({ equal: true, literal: false, named: true });
  });

  it('refuses what is not a header name (it would only hide the mistake until a response is written)', () => {
    expect(headerName('RateLimit-Policy')).toBe('RateLimit-Policy');
    for (const name of ['', 'X Header', 'X-Hé', 'X-Header:', 'X-\u2026']) expect(() => headerName(name)).toThrow(/not a header name/);
  });
});
