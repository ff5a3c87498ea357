import type { ApiKeyRecord, ApiKeyRepository, Plan } from '../storage/storage';
import { displayPrefix, generateApiKey, hashApiKey } from '../auth/api-key';

export interface IssueKeyInput {
  plan: Plan;
  label?: string;
  /** Required for `enterprise` (its custom limits), refused for other plans. */
  requestsPerMinute?: number;
  requestsPerDay?: number;
}

/**
 * Issues a key: the secret is returned once and only its SHA-256 hash is stored.
 *
 * @example const { key, record } = await issueApiKey(storage.apiKeys, { plan: 'free', label: 'ci' });
 */
export async function issueApiKey(
  apiKeys: ApiKeyRepository,
  input: IssueKeyInput,
): Promise<{ key: string; record: ApiKeyRecord }> {
  checkPlanLimits(input);
  const key = generateApiKey();
  const record = await apiKeys.create({
    hash: hashApiKey(key),
    prefix: displayPrefix(key),
    plan: input.plan,
    label: input.label ?? '',
    requestsPerMinute: input.requestsPerMinute ?? null,
    requestsPerDay: input.requestsPerDay ?? null,
  });
  return { key, record };
}

/** Enterprise keys need their own limits; the other plans' limits are fixed. */
export function checkPlanLimits({ plan, requestsPerMinute, requestsPerDay }: Omit<IssueKeyInput, 'label'>): void {
  const custom = [requestsPerMinute, requestsPerDay];
  if (plan === 'enterprise') {
    // Stored as 32-bit integers (on PostgreSQL too).
    if (custom.some((value) => value === undefined || !Number.isSafeInteger(value) || value < 1 || value > 2_147_483_647)) {
      throw new Error('an enterprise key needs --rpm N and --rpd N (integers from 1 to 2147483647)');
    }
  } else if (custom.some((value) => value !== undefined)) {
    throw new Error(`--rpm and --rpd are only for enterprise keys; the ${plan} plan has fixed limits`);
  }
}
