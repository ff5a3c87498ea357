import type { ApiKeyRecord } from '../storage/storage';

/** The authenticated client of a request: its API key, without the secret. */
export type Caller = Pick<ApiKeyRecord, 'id' | 'plan' | 'label' | 'requestsPerMinute' | 'requestsPerDay' | 'bannedUntil'>;
