import type { ApiKeyRecord, ApiKeyRepository, Role } from '../storage';
import type { Plan } from '../plans';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';

/**
 * A request the key service refuses because of what was asked (unknown key,
 * revoked key, limits that do not fit the plan), not because the database
 * failed: the CLI answers it with exit code 2.
 */
export class ApiKeyInputError extends Error {
  override readonly name = 'ApiKeyInputError';
}

export interface IssueKeyInput {
  plan: Plan;
  /** `customer` when omitted. */
  role?: Role;
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
export async function issueApiKey(apiKeys: ApiKeyRepository, input: IssueKeyInput): Promise<{ key: string; record: ApiKeyRecord }> {
  checkPlanLimits(input);
  const key = generateApiKey();
  const record = await apiKeys.create({
    hash: hashApiKey(key),
    prefix: displayPrefix(key),
    plan: input.plan,
    role: input.role ?? 'customer',
    label: input.label ?? '',
    requestsPerMinute: input.requestsPerMinute ?? null,
    requestsPerDay: input.requestsPerDay ?? null,
  });
  return { key, record };
}

/**
 * Gives an existing key a new secret: same id, plan, limits, label, ban and
 * rate-limit counters (all keyed by id); the old secret stops matching at
 * once in the database (servers' key caches drop it within their TTL, at
 * once when told through the key-change signal). The new secret is returned
 * once and only its hash is stored.
 *
 * @example const { key, record } = await rotateApiKey(storage.apiKeys, 3);
 */
export async function rotateApiKey(apiKeys: ApiKeyRepository, id: number): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = generateApiKey();
  if (!(await apiKeys.rotate(id, { hash: hashApiKey(key), prefix: displayPrefix(key) }))) {
    const existing = await apiKeys.get(id);
    if (!existing) throw new ApiKeyInputError(`no key with id ${id}`);
    throw new ApiKeyInputError(`key ${id} is revoked: a revoked key cannot be rotated (create a new one)`);
  }
  return { key, record: (await apiKeys.get(id))! };
}

/** Enterprise keys need their own limits; the other plans' limits are fixed. */
export function checkPlanLimits({ plan, requestsPerMinute, requestsPerDay }: Omit<IssueKeyInput, 'label'>): void {
  const custom = [requestsPerMinute, requestsPerDay];
  if (plan === 'enterprise') {
    // Stored as 32-bit integers (on PostgreSQL too).
    if (custom.some((value) => value === undefined || !Number.isSafeInteger(value) || value < 1 || value > 2_147_483_647)) {
      throw new ApiKeyInputError('an enterprise key needs --rpm N and --rpd N (integers from 1 to 2147483647)');
    }
  } else if (custom.some((value) => value !== undefined)) {
    throw new ApiKeyInputError(`--rpm and --rpd are only for enterprise keys; the ${plan} plan has fixed limits`);
  }
}
