import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { apiCompare } from 'api-smart-diff';
import { diffContracts } from './scripts/lib/contract-diff/diff-contracts';
const text = readFileSync('openapi/openapi.yaml','utf8');
let t = Date.now(); for (let i=0;i<5;i++) parse(text); console.log('parse', (Date.now()-t)/5);
const d = parse(text); const e = parse(text); e.paths['/pets'].get.parameters[0].schema.maximum = 50;
t = Date.now(); for (let i=0;i<5;i++) apiCompare(structuredClone(d), structuredClone(e)); console.log('compare', (Date.now()-t)/5);
t = Date.now(); for (let i=0;i<5;i++) diffContracts(d, e); console.log('diffContracts', (Date.now()-t)/5);
