/**
 * The three renderings of a comparison: text lines for a terminal, JSON for
 * machines, and a markdown summary a CI job can post on a pull request.
 */
import type { ChangeClass, ContractChange } from './change';
import type { GateVerdict } from './version-gate';

export interface ComparisonResult {
  base: { source: string; version: string };
  head: { source: string; version: string };
  changes: ContractChange[];
  gate: GateVerdict;
}

export type ReportFormat = 'text' | 'json' | 'markdown';
export const REPORT_FORMATS: readonly ReportFormat[] = ['text', 'json', 'markdown'];

/** How each class is printed. */
export const LABEL: Record<ChangeClass, string> = { breaking: 'BREAKING', 'non-breaking': 'NON-BREAKING', annotation: 'ANNOTATION' };

/** A value short enough for one line, or undefined for an object (a whole operation, a schema): its location says what it is. */
function short(value: unknown): string | undefined {
  const json = JSON.stringify(value) ?? String(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0) return undefined;
  return json.length <= 80 ? json : `${json.slice(0, 77)}…`;
}

/** `100 → 50`, `added "adopted"`, `removed`. */
export function describeChange(change: ContractChange): string {
  const before = short(change.before);
  const after = short(change.after);
  if (change.action === 'add') return after === undefined ? 'added' : `added ${after}`;
  if (change.action === 'remove') return before === undefined ? 'removed' : `removed ${before}`;
  return before === undefined && after === undefined ? 'changed' : `${before ?? '{…}'} → ${after ?? '{…}'}`;
}

/** `3 changes: 1 breaking, 2 non-breaking, 0 annotation` */
export const counts = (changes: readonly ContractChange[]): string => {
  const count = (changeClass: ChangeClass): number => changes.filter((change) => change.class === changeClass).length;
  return `${changes.length} change${changes.length === 1 ? '' : 's'}: ${count('breaking')} breaking, ${count('non-breaking')} non-breaking, ${count('annotation')} annotation`;
};

/**
 * One line per change, then the verdict.
 *
 * @example
 * // BREAKING paths./pets.get.parameters.limit.schema.maximum: 100 → 50 (requests that were valid are now refused)
 */
export function renderText(result: ComparisonResult): string {
  const header = `api:diff ${result.head.source} (${result.head.version}) against ${result.base.source} (${result.base.version})`;
  if (result.changes.length === 0) return `${header}\nno changes\n`;
  const lines = result.changes.map((change) => `${LABEL[change.class]} ${change.location}: ${describeChange(change)} (${change.reason})`);
  const verdict = `${result.gate.passed ? 'OK' : 'FAIL'}: ${result.gate.summary}`;
  return `${[header, ...lines, counts(result.changes), verdict].join('\n')}\n`;
}

/** The whole result, for machines. */
export function renderJson(result: ComparisonResult): string {
  return `${JSON.stringify({ ...result, passed: result.gate.passed }, null, 2)}\n`;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A pull-request comment: the verdict first, then a table of the changes (breaking first). */
export function renderMarkdown(result: ComparisonResult): string {
  const { base, head, gate, changes } = result;
  const title = `### API contract: ${head.version} against ${base.version} (${cell(base.source)})`;
  const verdict = gate.passed ? `✅ **Passed**: ${gate.summary}.` : `❌ **Failed**: ${gate.summary}.`;
  if (changes.length === 0) return `${title}\n\n${verdict}\n`;
  const rows = changes.map((change) => `| ${LABEL[change.class]} | \`${cell(change.location)}\` | ${cell(describeChange(change))} | ${cell(change.reason)} |`);
  return [title, '', verdict, '', `${counts(changes)}.`, '', '| Class | Location | Change | Why |', '|---|---|---|---|', ...rows, ''].join('\n');
}

export const RENDERERS: Record<ReportFormat, (result: ComparisonResult) => string> = {
  text: renderText,
  json: renderJson,
  markdown: renderMarkdown,
};
