import type { ApiKeyRecord } from '../../src/service/storage';
import { PLAN_LIMITS } from '../../src/service/plans';

/**
 * A key as the keys CLI shows it (`--json` prints exactly this): the stored
 * record's fields (no secret, no hash), with the limits that apply (the
 * plan's, or an enterprise key's own) and `bannedUntil` only while a ban is
 * in force (an ended ban is history, not state).
 */
export type KeyView = Readonly<ApiKeyRecord>;

/**
 * What the CLI shows of a stored key at `now`.
 *
 * @example keyView(record, new Date()).bannedUntil // null once the ban has ended
 */
export function keyView(record: ApiKeyRecord, now: Date): KeyView {
  const planLimits = record.plan === 'enterprise' ? undefined : PLAN_LIMITS[record.plan];
  const banned = record.bannedUntil !== null && Date.parse(record.bannedUntil) > now.getTime();
  return {
    id: record.id,
    prefix: record.prefix,
    plan: record.plan,
    role: record.role,
    label: record.label,
    requestsPerMinute: planLimits?.perMinute ?? record.requestsPerMinute,
    requestsPerDay: planLimits?.perDay ?? record.requestsPerDay,
    createdAt: record.createdAt,
    revokedAt: record.revokedAt,
    bannedUntil: banned ? record.bannedUntil : null,
  };
}

const NONE = '-';

/** Control characters (a label may hold anything) would move the terminal's cursor or colour it. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching the C0 and C1 control characters is the point
const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');

interface Column {
  header: string;
  /** Numbers are right-aligned. */
  numeric?: boolean;
  value(view: KeyView): string;
}

const limit = (value: number | null): string => (value === null ? NONE : String(value));

const COLUMNS: Column[] = [
  { header: 'ID', numeric: true, value: (view) => String(view.id) },
  { header: 'PREFIX', value: (view) => `${view.prefix}…` },
  { header: 'PLAN', value: (view) => view.plan },
  { header: 'ROLE', value: (view) => view.role },
  { header: 'PER MINUTE', numeric: true, value: (view) => limit(view.requestsPerMinute) },
  { header: 'PER DAY', numeric: true, value: (view) => limit(view.requestsPerDay) },
  { header: 'CREATED', value: (view) => view.createdAt },
  { header: 'REVOKED', value: (view) => view.revokedAt ?? NONE },
  { header: 'BANNED UNTIL', value: (view) => view.bannedUntil ?? NONE },
  // Last, so a long label does not push the other columns.
  { header: 'LABEL', value: (view) => (view.label === '' ? NONE : printable(view.label)) },
];

/**
 * Keys as an aligned table: a header, one line per key, columns separated by
 * two spaces, numbers right-aligned, `-` for nothing.
 *
 * @example
 * formatKeyTable([view])
 * // ID  PREFIX       PLAN  ROLE      PER MINUTE  PER DAY  CREATED                   REVOKED  BANNED UNTIL  LABEL
 * //  1  pas_AbC123…  free  customer          60     1000  2026-11-22T03:51:07.000Z  -        -             ci bot
 */
export function formatKeyTable(views: KeyView[]): string {
  const rows = views.map((view) => COLUMNS.map((column) => column.value(view)));
  const widths = COLUMNS.map((column, index) => Math.max(column.header.length, ...rows.map((row) => row[index]!.length)));
  const line = (values: string[]): string =>
    values
      .map((value, index) => (COLUMNS[index]!.numeric ? value.padStart(widths[index]!) : value.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  return [line(COLUMNS.map((column) => column.header)), ...rows.map(line)].join('\n');
}

/**
 * One key, one field per line.
 *
 * @example formatKeyDetails(view) // 'id            3\nprefix        pas_AbC123…\n...'
 */
export function formatKeyDetails(view: KeyView): string {
  const limits =
    view.requestsPerMinute === null || view.requestsPerDay === null
      ? NONE
      : `${view.requestsPerMinute} per minute, ${view.requestsPerDay} per day${view.plan === 'enterprise' ? " (this key's own)" : ` (the ${view.plan} plan's)`}`;
  const fields: Array<[string, string]> = [
    ['id', String(view.id)],
    ['prefix', `${view.prefix}…`],
    ['plan', view.plan],
    ['role', view.role],
    ['limits', limits],
    ['label', view.label === '' ? NONE : printable(view.label)],
    ['created', view.createdAt],
    ['revoked', view.revokedAt ?? 'no'],
    ['banned until', view.bannedUntil ?? 'not banned'],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  return fields.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}
