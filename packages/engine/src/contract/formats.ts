/**
 * String formats the contract uses, checked the same way everywhere (the
 * request validator, the schema validator, the tests' conformance check).
 *
 * express-openapi-validator's `int64` only checks "is an integer", so 2^63 and
 * 1e20 pass. Ids must be exact in JavaScript: safe integers only.
 *
 * @example ajv.addFormat('int64', int64Format);
 */
export const int64Format = {
  type: 'number' as const,
  validate: (value: number): boolean => Number.isSafeInteger(value),
};

export const int32Format = {
  type: 'number' as const,
  validate: (value: number): boolean => Number.isInteger(value) && Math.abs(value) < 2 ** 31,
};
