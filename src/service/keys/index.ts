/**
 * API keys: their format, the credential check behind every key-carrying
 * scheme, the caller it makes, and the key service the CLI uses. Code outside
 * this folder imports them from here (test/layout.test.ts checks it).
 *
 * @example const credentials = keyCheck({ apiKeys: storage.apiKeys, cacheTtlMs: 2_000, tokenPlan: 'free' });
 */
export { generateApiKey } from './api-key';
export type { Caller } from './caller';
export type { KeyChanges } from './key-changes';
export { keyCheck } from './key-check';
export { ApiKeyInputError, checkPlanLimits, issueApiKey, rotateApiKey } from './key-service';
