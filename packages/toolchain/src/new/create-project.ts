/**
 * `spec-first new <document> <dir>` (`npm run new` in the repository): a
 * project of its own that serves the document. It is written into a
 * scratch folder beside `dir` and moved into place whole, so a document
 * that cannot be served leaves nothing behind.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { createEngine, notImplementedHandler, placementOf, type OpenApiDocument } from '@spec-first/engine';
import { deref, effectiveSecurity, listOperations, loadDocument, type SpecOperation } from '@spec-first/engine/testing';
import { runApiRelease } from '../api-diff/api-release-command';
import { renderAll, writeGenerated } from '../generate/render';
import { projectVersions, scaffold } from '../scaffold';
import { documentFiles } from './document-files';
import { packageJson, readme, type ProjectFacts } from './project-files';

/** What `new` made. */
export interface CreatedProject {
  readonly dir: string;
  readonly version: string;
  readonly operations: number;
}

const USAGE = 'usage: npm run new -- <document: a local OpenAPI 3.0, 3.1 or 3.2 file, YAML or JSON> <dir: where the project goes>';

/** The toolchain's own package folder (its template/ is there). */
const TOOLCHAIN = path.resolve(__dirname, '../..');

/**
 * Writes the project; resolves to the exit code (0, or 2 with the reason on
 * stderr and nothing written).
 *
 * @example await createProject(['openapi/petstore.yaml', '../petstore'], process.cwd()) // 0
 */
export async function createProject(args: readonly string[], cwd: string): Promise<number> {
  let positionals: string[];
  try {
    ({ positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} }));
  } catch (error) {
    console.error(`new: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [documentArg, dirArg] = positionals;
  if (documentArg === undefined || dirArg === undefined || positionals.length > 2) {
    console.error(USAGE);
    return 2;
  }
  const document = path.resolve(cwd, documentArg);
  const target = path.resolve(cwd, dirArg);
  const refusal = refusalOf(document, documentArg, target, dirArg);
  if (refusal) {
    console.error(`new: ${refusal}`);
    return 2;
  }
  let spec: OpenApiDocument;
  try {
    spec = await loadDocument(document);
  } catch (error) {
    console.error(`new: ${documentArg} cannot be read as an OpenAPI document: ${(error as Error).message}`);
    return 2;
  }
  const version = versionName(spec);
  const operations = listOperations(spec).map((op) => op.operationId);
  if (operations.length === 0) {
    console.error(`new: ${documentArg} declares no operation (paths) to serve`);
    return 2;
  }
  // The start's own refusals, now: what the server would refuse at start is refused here, by name.
  try {
    const engine = await createEngine({
      documents: [
        { name: version, document: spec, source: documentArg, handlers: Object.fromEntries(operations.map((id) => [id, notImplementedHandler(id)])) },
      ],
      credentials: { key: () => ({ principal: 'new' }) },
    });
    engine.beginShutdown();
    for (const warning of engine.warnings) console.warn(`new: ${warning.kind}: ${warning.message}`);
  } catch (error) {
    console.error(`new: ${documentArg} cannot be served: ${(error as Error).message}`);
    return 2;
  }

  mkdirSync(path.dirname(target), { recursive: true });
  removeAbandoned(target);
  const scratch = mkdtempSync(path.join(path.dirname(target), `.${path.basename(target)}.creating-`));
  try {
    const facts = await writeProject(scratch, { document, documentArg, spec, version, name: path.basename(target) });
    if (existsSync(target)) rmdirSync(target);
    renameSync(scratch, target);
    // mkdtemp made it private; the project is an ordinary folder.
    chmodSync(target, 0o777 & ~process.umask());
    console.log(
      `new: ${dirArg} serves ${documentArg} (${facts.title}, OpenAPI ${spec.openapi}) under /${version}: ${operations.length} operations, each a stub until its handler is written.`,
    );
    console.log(`next: cd ${dirArg} && npm install && npm start   (then npm run keys -- create, and npm test)`);
    return 0;
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    console.error(`new: ${(error as Error).message}`);
    return 2;
  }
}

/** A scratch folder older than this was left by a `new` that was killed: no run takes so long. */
const ABANDONED_AFTER_MS = 10 * 60_000;

/** Removes the scratch folders of earlier runs for the same `target` that were killed before they finished. */
function removeAbandoned(target: string): void {
  const prefix = `.${path.basename(target)}.creating-`;
  for (const name of readdirSync(path.dirname(target))) {
    const folder = path.join(path.dirname(target), name);
    if (name.startsWith(prefix) && Date.now() - statSync(folder).mtimeMs > ABANDONED_AFTER_MS) rmSync(folder, { recursive: true, force: true });
  }
}

function refusalOf(document: string, documentArg: string, target: string, dirArg: string): string | undefined {
  if (/^https?:\/\//i.test(documentArg)) return `${documentArg}: give a local file (download it first), so the project keeps the document as written`;
  if (!existsSync(document)) return `${documentArg}: no such file`;
  if (!statSync(document).isFile()) return `${documentArg} is not a file`;
  if (existsSync(target) && !statSync(target).isDirectory()) return `${dirArg} exists and is not a folder: name a new folder`;
  if (existsSync(target) && readdirSync(target).length > 0) return `${dirArg} already exists and is not empty: name a new folder`;
  return undefined;
}

/** `vN` from the major of `info.version` (1 when it has none). */
function versionName(spec: OpenApiDocument): string {
  const major = /^v?(\d+)(\.|$)/i.exec(String(spec.info?.version ?? '').trim())?.[1];
  return `v${major === undefined ? 1 : Number(major)}`;
}

async function writeProject(
  root: string,
  input: { document: string; documentArg: string; spec: OpenApiDocument; version: string; name: string },
): Promise<ProjectFacts> {
  const documentFile = await copyDocument(input.document, input.spec, path.join(root, 'openapi', input.version));
  for (const entry of readdirSync(path.join(TOOLCHAIN, 'template'))) {
    cpSync(path.join(TOOLCHAIN, 'template', entry), path.join(root, entry.replace(/^_/, '.').replace(/^\.biome/, 'biome')), { recursive: true });
  }
  const schemes = schemesOf(input.spec);
  const facts: ProjectFacts = {
    name: input.name,
    title: String(input.spec.info?.title ?? input.name),
    source: path.basename(input.documentArg),
    document: path.relative(root, documentFile).split(path.sep).join('/'),
    version: input.version,
    openapi: String(input.spec.openapi),
    schemes,
    firstOperation: firstOperation(input.spec, schemes),
    dependencies: dependenciesOf(path.join(root, 'vendor')),
  };
  writeFileSync(path.join(root, 'package.json'), `${JSON.stringify(packageJson(facts), null, 2)}\n`);
  writeFileSync(path.join(root, 'README.md'), readme(facts));
  await writeGenerated(await renderAll(root), path.join(root, 'generated'));
  scaffold(path.join(root, 'src', 'handlers'), await projectVersions(root));
  // The document as received is its first release, so `npm run api:diff` compares every later edit with it.
  const released = await runApiRelease(['--version', input.version], root, root).catch((error: Error) => ({ exitCode: 2, stderr: error.message }));
  if (released.exitCode !== 0)
    console.warn(
      `new: no first release recorded (${released.stderr.trim().replace(/^api:release: /, '')}): npm run api:diff has nothing to compare with until npm run api:release -- --version ${input.version} records one`,
    );
  return facts;
}

/**
 * The document as written, into `folder` as `openapi.yaml` (or `.json`):
 * its split files beside it as they were, when they all sit under the
 * root's folder and the copy reads exactly as the original does (a split
 * file that named the root's old file name, or a reference the walk could
 * not follow, shows there); else bundled into one file.
 */
async function copyDocument(document: string, spec: OpenApiDocument, folder: string): Promise<string> {
  const json = /\.json$/i.test(document);
  const rootFile = path.join(folder, json ? 'openapi.json' : 'openapi.yaml');
  const base = path.dirname(document);
  const others = documentFiles(document)
    .slice(1)
    .map((file) => path.relative(base, file));
  mkdirSync(folder, { recursive: true });
  // Nothing is ever written outside the folder.
  if (others.every((relative) => !relative.startsWith('..') && !path.isAbsolute(relative))) {
    // Links are followed: the project owns its copy, whatever the designer's folder links to. The root goes last, so no split file takes its name.
    for (const relative of others) {
      mkdirSync(path.dirname(path.join(folder, relative)), { recursive: true });
      cpSync(path.join(base, relative), path.join(folder, relative), { dereference: true });
    }
    cpSync(document, rootFile, { dereference: true });
    const copied = await loadDocument(rootFile).then(
      (loaded) => isDeepStrictEqual(loaded, spec),
      () => false,
    );
    if (copied) return rootFile;
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
  }
  writeFileSync(rootFile, json ? `${JSON.stringify(spec, null, 2)}\n` : stringify(spec, { aliasDuplicateObjects: false }));
  return rootFile;
}

/** Each security scheme by name, with where its credential goes. */
function schemesOf(spec: OpenApiDocument): ProjectFacts['schemes'] {
  return Object.entries(spec.components?.securitySchemes ?? {}).map(([name, raw]) => {
    const scheme = deref(spec, raw) as Parameters<typeof placementOf>[0];
    return { name, type: String((scheme as { type?: unknown }).type), placement: placementOf(scheme) };
  });
}

/**
 * The operation a README's first request shows: a GET that needs nothing
 * but a key (so the key just created is seen at work), else a GET that
 * needs nothing at all, else the first; with the scheme its key goes by.
 */
function firstOperation(spec: OpenApiDocument, schemes: ProjectFacts['schemes']): ProjectFacts['firstOperation'] {
  const keyed = new Set(schemes.filter((scheme) => scheme.placement?.holds === 'key').map((scheme) => scheme.name));
  const keyOf = (op: SpecOperation): string | undefined =>
    effectiveSecurity(spec, op)
      .map((requirement) => Object.keys(requirement))
      .find((names) => names.length === 1 && keyed.has(names[0]!))?.[0];
  const open = (op: SpecOperation): boolean => {
    const requirements = effectiveSecurity(spec, op);
    return requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0);
  };
  const needsNothing = (op: SpecOperation): boolean => {
    const parameters = [...((op.pathItem['parameters'] as unknown[]) ?? []), ...((op.operation['parameters'] as unknown[]) ?? [])];
    const body = deref(spec, op.operation['requestBody']) as { required?: boolean } | undefined;
    return (
      op.method === 'get' &&
      !parameters.some((parameter) => (deref(spec, parameter) as { required?: boolean } | undefined)?.required === true) &&
      body?.required !== true
    );
  };
  const operations = listOperations(spec);
  const chosen =
    operations.find((op) => needsNothing(op) && keyOf(op) !== undefined) ?? operations.find((op) => needsNothing(op) && open(op)) ?? operations[0]!;
  const ready = needsNothing(chosen) && (keyOf(chosen) !== undefined || open(chosen));
  return { method: chosen.method.toUpperCase(), path: chosen.path, operationId: chosen.operationId, scheme: keyOf(chosen), ready };
}

/**
 * The engine and the toolchain as the project depends on them: from the
 * registry (`^version`) when they were installed from one; else packed
 * from the folders they run from into `vendor/`, so the project installs
 * from a clone with no published copy.
 */
function dependenciesOf(vendor: string): ProjectFacts['dependencies'] {
  const engine = packageFolder(path.dirname(require.resolve('@spec-first/engine')));
  return {
    engine: dependencyOn(engine, vendor),
    toolchain: dependencyOn(TOOLCHAIN, vendor),
  };
}

function packageFolder(start: string): string {
  for (let dir = start; path.dirname(dir) !== dir; dir = path.dirname(dir)) if (existsSync(path.join(dir, 'package.json'))) return dir;
  throw new Error(`no package.json above ${start}`);
}

function dependencyOn(folder: string, vendor: string): string {
  const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version: string };
  if (fromRegistry(folder)) return `^${manifest.version}`;
  mkdirSync(vendor, { recursive: true });
  // An installed copy (from a tarball, a folder, git) is packed as it is; this repository's own is built first (prepack).
  // Both folders are real paths already: require.resolve's, and this module's own.
  const installed = folder.split(path.sep).includes('node_modules');
  const packed = execFileSync('npm', ['pack', '--silent', ...(installed ? ['--ignore-scripts'] : []), '--pack-destination', vendor], {
    cwd: folder,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .trim()
    .split('\n')
    .pop()!;
  return `file:vendor/${packed}`;
}

/** Whether npm installed the package in `folder` from a registry: its lockfile entry was resolved from an http(s) URL. */
function fromRegistry(folder: string): boolean {
  const parts = folder.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at === -1) return false;
  const project = parts.slice(0, at).join(path.sep);
  try {
    const lock = JSON.parse(readFileSync(path.join(project, 'node_modules', '.package-lock.json'), 'utf8')) as {
      packages?: Record<string, { resolved?: string; link?: boolean }>;
    };
    const entry = lock.packages?.[parts.slice(at).join('/')];
    return entry?.link !== true && /^https?:\/\//.test(entry?.resolved ?? '');
  } catch {
    return false;
  }
}
