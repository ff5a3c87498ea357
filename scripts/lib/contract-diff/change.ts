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

export interface ContractChange extends ChangeVerdict {
  /** Readable location, e.g. `paths./pets.get.parameters.limit.schema.maximum`. */
  location: string;
  action: 'add' | 'remove' | 'replace' | 'rename';
  before?: unknown;
  after?: unknown;
}
