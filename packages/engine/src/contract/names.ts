/**
 * The one rule that turns an operation of a document into the identifier the
 * code uses for it: the export of its handler, its registry key, its file
 * name (`<name>.ts`), and its name in metrics and logs.
 *
 * - Every run of characters that are neither letters nor digits is removed,
 *   and the letter after it is upper-cased: `get-orders` → `getOrders`,
 *   `orders.list` → `ordersList`, `list data sets` → `listDataSets`. Letters
 *   keep their case otherwise (`GetPet` stays `GetPet`).
 * - A name that starts with a digit gets a leading `_` (`2fa-verify` →
 *   `_2faVerify`); a JavaScript reserved word gets a trailing `_` (`delete` →
 *   `delete_`), and so does a name the handlers' folder already uses for
 *   itself (`index`, `types`, `context`, the registry's own exports, a
 *   version name such as `v1`).
 * - An operation without an operationId is named from its method and path:
 *   `GET /pets/{petId}/photos` → `getPetsPetIdPhotos`, `POST /` → `post`.
 *
 * Two operations of one document that end up with the same name are refused
 * (`operationNames`), naming both and their paths.
 */

/**
 * Reserved words, and the strict-mode and module ones: none may be an
 * exported `const`. Then the names of the handlers' folder itself: its
 * files (`index.ts`, `types.ts`, `context.ts`) and what its registry file
 * declares, so a stub never collides with them.
 */
const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if ' +
    'import in instanceof new null return super switch this throw true try typeof var void while with yield let static ' +
    'implements interface package private protected public await arguments eval undefined NaN Infinity ' +
    'index types context handlers registries handlerContexts notImplementedHandler Handler HandlerRegistry Version'
  ).split(' '),
);
/** `v1`, `v2`, ...: the registries of the versions. */
const VERSION_NAME = /^v\d+$/;

const SEPARATORS = /[^\p{L}\p{N}]+(.)?/gu;

/**
 * The identifier of an operationId, by the rule above.
 *
 * @example identifierOf('list-data-sets') // 'listDataSets'
 * @example identifierOf('delete')         // 'delete_'
 */
export function identifierOf(operationId: string): string {
  const joined = operationId.replace(SEPARATORS, (_match, next: string | undefined) => (next === undefined ? '' : next.toUpperCase()));
  if (joined === '') return '_';
  if (/^\p{N}/u.test(joined)) return `_${joined}`;
  return RESERVED.has(joined) || VERSION_NAME.test(joined) ? `${joined}_` : joined;
}

/**
 * The name of an operation that has no operationId: its method, then each
 * path segment (a parameter by its name), joined by the same rule.
 *
 * @example derivedName('get', '/pets/{petId}') // 'getPetsPetId'
 */
export function derivedName(method: string, path: string): string {
  const words = path.split('/').map((segment) => segment.replace(/[{}]/g, ''));
  return identifierOf([method.toLowerCase(), ...words].join('-'));
}

/** Where an operation is, for messages: `GET /pets/{petId}`. */
export const whereIs = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;

/**
 * The name of every operation (same order as given), refusing two that
 * share one.
 *
 * @example operationNames([{ operationId: 'get-orders', method: 'get', path: '/orders' }]) // ['getOrders']
 */
export function operationNames(operations: ReadonlyArray<{ operationId: string | undefined; method: string; path: string }>): string[] {
  const seen = new Map<string, { operationId: string | undefined; method: string; path: string }>();
  return operations.map((operation) => {
    const name = operation.operationId === undefined ? derivedName(operation.method, operation.path) : identifierOf(operation.operationId);
    const other = seen.get(name);
    if (other) {
      const describe = (op: typeof operation): string =>
        `${op.operationId === undefined ? '(no operationId)' : `operationId "${op.operationId}"`} at ${whereIs(op.method, op.path)}`;
      throw new Error(
        `two operations have the identifier "${name}": ${describe(other)} and ${describe(operation)}; ` +
          'rename one of the operationIds (the rule: separators removed, the next letter upper-cased)',
      );
    }
    seen.set(name, operation);
    return name;
  });
}
