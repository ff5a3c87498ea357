/**
 * `npm run build` (and so `npm start`, `npm run mock`): compiles src/,
 * generated/ and scripts/ into dist/ incrementally, so a checkout that is
 * already built starts in seconds instead of recompiling everything.
 *
 * It is `tsc -b tsconfig.build.json` (TypeScript's build mode, through its
 * API): up to date when no input is newer than the last build (about 0.1 s),
 * else an incremental compile from dist/tsconfig.build.tsbuildinfo. Build
 * mode trusts that file about what is already emitted, so when an output is
 * missing (dist/ deleted in part, a file removed by hand) the file is
 * deleted first and everything is compiled again; a deleted dist/ takes the
 * file with it.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const CONFIG = path.join(ROOT, 'tsconfig.build.json');
const pretty = ts.sys.writeOutputIsTTY?.() ?? false;
const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (file) => file,
  getCurrentDirectory: () => ts.sys.getCurrentDirectory(),
  getNewLine: () => ts.sys.newLine,
};
/** As tsc prints them: `file(line,col): error TSnnnn: ...`, with colour and context on a terminal. */
const reportDiagnostic: ts.DiagnosticReporter = (diagnostic) =>
  ts.sys.write(pretty ? ts.formatDiagnosticsWithColorAndContext([diagnostic], formatHost) : ts.formatDiagnostic(diagnostic, formatHost));

const parsed = ts.getParsedCommandLineOfConfigFile(
  CONFIG,
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      reportDiagnostic(diagnostic);
      process.exit(1);
    },
  },
)!;
const buildInfo = parsed.options.tsBuildInfoFile && path.resolve(ROOT, parsed.options.tsBuildInfoFile);
if (buildInfo && existsSync(buildInfo)) {
  const ignoreCase = !ts.sys.useCaseSensitiveFileNames;
  const missing = parsed.fileNames.flatMap((file) => ts.getOutputFileNames(parsed, file, ignoreCase)).find((output) => !existsSync(output));
  if (missing) {
    console.log(`${path.relative(ROOT, missing)} is missing: compiling everything again`);
    rmSync(buildInfo);
  }
}

const host = ts.createSolutionBuilderHost(ts.sys, undefined, reportDiagnostic, ts.createBuilderStatusReporter(ts.sys, pretty));
const status = ts.createSolutionBuilder(host, [CONFIG], {}).build();
process.exit(status === ts.ExitStatus.Success ? 0 : 1);
