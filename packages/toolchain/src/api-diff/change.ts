/** One change between two contracts, as the gate and its reports see it. */

/** What a change means for deployed clients. */
export type ChangeClass = 'breaking' | 'non-breaking' | 'annotation';

export const CHANGE_CLASSES: readonly ChangeClass[] = ['breaking', 'non-breaking', 'annotation'];

/** A class with the reason a reader is given, and the project rule that decided it (none: api-smart-diff did). */
export interface ChangeVerdict {
  class: ChangeClass;
  reason: string;
  rule?: string;
}

/** The operation a change is in, so reports can group changes per operation. */
export interface ChangeOperation {
  /** Absent only when the document lacks one (the server refuses such a contract). */
  operationId?: string;
  /** Lower-case, as in the document. */
  method: string;
  /** The path template, e.g. `/pets/{petId}`. */
  path: string;
  /** The location inside the operation, e.g. `parameters.limit.schema.maximum`; '' when the change is the operation itself (added, removed). */
  at: string;
}

export interface ContractChange extends ChangeVerdict {
  /** Readable location, e.g. `paths./pets.get.parameters.limit.schema.maximum`. */
  location: string;
  /** Absent for a change outside operations (components, info, path-level parameters). */
  operation?: ChangeOperation;
  action: 'add' | 'remove' | 'replace' | 'rename';
  before?: unknown;
  after?: unknown;
}

/**
 * An operation as reports name it.
 *
 * @example
 * operationLabel({ operationId: 'getPet', method: 'get', path: '/pets/{petId}' }); // 'getPet (GET /pets/{petId})'
 */
export const operationLabel = ({ operationId, method, path }: Pick<ChangeOperation, 'operationId' | 'method' | 'path'>): string =>
  operationId === undefined ? `${method.toUpperCase()} ${path}` : `${operationId} (${method.toUpperCase()} ${path})`;
