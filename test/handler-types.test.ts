import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from './support/paths';

/**
 * `@ts-expect-error` is satisfied by any error. Each directive of the type
 * tests names the error it is about (`— TS2322: fragment of the message`);
 * here the file is compiled without its directives and every such line must
 * fail with that code and message, and no other line may fail.
 */
const FILE = path.join(PROJECT_ROOT, 'test/types/handler-types.typecheck.ts');
const DIRECTIVE = /\/\/ @ts-expect-error (.*) — TS(\d+): (.*)$/;

interface Expected {
  line: number;
  why: string;
  code: number;
  fragment: string;
}

function expectations(source: string): Expected[] {
  return source.split('\n').flatMap((text, index) => {
    const match = DIRECTIVE.exec(text);
    // The directive's line is index; the line it is about is the next one (1-based: index + 2).
    return match ? [{ line: index + 2, why: match[1]!, code: Number(match[2]), fragment: match[3]! }] : [];
  });
}

function diagnostics(source: string): Array<{ line: number; code: number; message: string }> {
  const { config } = ts.readConfigFile(path.join(PROJECT_ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, PROJECT_ROOT);
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => (path.resolve(name) === FILE ? ts.createSourceFile(name, source, language) : read(name, language, ...rest));
  const program = ts.createProgram([FILE], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(FILE)).map((diagnostic) => ({
    line: diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start!).line + 1,
    code: diagnostic.code,
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
  }));
}

describe('the type tests fail for the reason each names', () => {
  const source = readFileSync(FILE, 'utf8');
  const expected = expectations(source);
  // Every directive names its error (a bare one would accept anything).
  const bare = source.split('\n').filter((text) => text.includes('@ts-expect-error') && !DIRECTIVE.test(text) && !text.trimStart().startsWith('*'));
  const found = diagnostics(source.replace(/\/\/ @ts-expect-error/g, '// (expected error)'));

  it('every directive names the error it expects', () => {
    expect(bare).toEqual([]);
    expect(expected.length).toBeGreaterThanOrEqual(15);
  });

  it.each(expected.map((entry) => [entry.why, entry] as const))('%s', (_why, entry) => {
    const onLine = found.filter((diagnostic) => diagnostic.line === entry.line);
    expect(onLine.map(({ code, message }) => ({ code, message }))).toEqual([{ code: entry.code, message: expect.stringContaining(entry.fragment) }]);
  });

  it('no other line fails to compile', () => {
    const lines = new Set(expected.map((entry) => entry.line));
    expect(found.filter((diagnostic) => !lines.has(diagnostic.line))).toEqual([]);
  });
});
