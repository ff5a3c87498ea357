import { apiCompare } from 'api-smart-diff';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
const orig = parse(readFileSync('openapi/openapi.yaml','utf8'));
type Doc = any;
const cases: Array<[string, (d: Doc)=>void, ((d: Doc)=>void)?]> = [
 ['resp field type change', d => { d.components.schemas.Pet.properties.name.type = 'integer'; }],
 ['resp type widen int->number', d => { d.components.schemas.Error.properties.status.type = 'number'; }],
 ['resp min lowered', d => { d.components.schemas.Error.properties.status.minimum = 100; }],
 ['req type widen int->number', d => { d.paths['/pets'].get.parameters[0].schema.type='number'; }],
 ['optional param removed', d => { d.paths['/pets'].get.parameters.splice(0,1); }],
 ['request body media type removed', d => { d.paths['/pets'].post.requestBody.content = {'application/xml': d.paths['/pets'].post.requestBody.content['application/json']}; }],
 ['response header removed', d => { delete d.paths['/pets'].get.responses['200'].headers['RateLimit']; }],
 ['response header added required', d => { d.paths['/pets'].get.responses['200'].headers['X-New'] = {required:true, schema:{type:'string'}}; }],
 ['request body becomes required', d => { d.paths['/pets'].post.requestBody.required = true; }, d => { d.paths['/pets'].post.requestBody.required = false; }],
 ['request body added required', d => { d.paths['/store/orders'].get.requestBody = {required:true, content:{'application/json':{schema:{type:'object'}}}}; }],
 ['root x-ext', d => { d['x-foo'] = 1; }],
 ['tags', d => { d.tags.push({name:'x'}); }],
 ['info contact', d => { d.info.contact.name = 'x'; }],
 ['operationId change', d => { d.paths['/pets'].get.operationId = 'listAllPets'; }],
 ['response schema nullable 3.1', d => { d.components.schemas.Pet.properties.name.type = ['string','null']; }],
 ['request addlProps false added', d => { d.components.schemas.NewPet.additionalProperties = false; }, d => { delete d.components.schemas.NewPet.additionalProperties; }],
 ['path param rename', d => { const p=d.paths['/pets/{petId}']; delete d.paths['/pets/{petId}']; p.get.parameters[0].name='id'; d.paths['/pets/{id}']=p; }],
 ['response status 200->201', d => { const r=d.paths['/pets/{petId}'].get.responses; r['201']=r['200']; delete r['200']; }],
 ['const added request', d => { d.components.schemas.NewPet.properties.name.const = 'Rex'; }],
 ['oneOf narrowing', d=>{}, d=>{}],
 ['exclusiveMaximum added request', d => { d.paths['/pets'].get.parameters[0].schema.exclusiveMaximum = 50; }],
 ['maxItems response lowered', d => { d.components.schemas.Pets.maxItems = 10; }, d => { d.components.schemas.Pets.maxItems = 100; }],
 ['format added request', d => { d.components.schemas.NewPet.properties.name.format = 'email'; }],
 ['deprecated param', d => { d.paths['/pets'].get.parameters[0].deprecated = true; }],
 ['default change', d => { d.paths['/pets'].get.parameters[0].schema.default = 10; }],
];
for (const [name, edit, baseEdit] of cases) {
  const base = structuredClone(orig); if (baseEdit) baseEdit(base);
  const after = structuredClone(base); edit(after);
  const { diffs } = apiCompare(base, after);
  console.log(`=== ${name}`);
  for (const d of diffs) if (d.path[0] !== 'components') console.log('  ', d.type, d.action, d.path.join('.'), JSON.stringify(d.before)?.slice(0,60), JSON.stringify(d.after)?.slice(0,60));
  const comp = diffs.filter(d => d.path[0]==='components'); if (comp.length) console.log('   components:', comp.map(d => d.type+' '+d.path.join('.')).join(' | '));
}
