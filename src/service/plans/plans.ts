/** The plans of the specification's Limits section. */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  perMinute: number;
  perDay: number;
}

/** Requests per minute and per day of each plan (the seed's Limits section). Enterprise keys carry their own. */
export const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, PlanLimits>> = Object.freeze({
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
});

/** What a key (or an access token's caller) says of its limits: its plan, and an enterprise key's own figures. */
export interface LimitsHolder {
  plan: Plan;
  requestsPerMinute: number | null;
  requestsPerDay: number | null;
}

/** The limits that apply to a key. */
export function limitsOf(caller: LimitsHolder): PlanLimits {
  if (caller.plan !== 'enterprise') return PLAN_LIMITS[caller.plan];
  if (caller.requestsPerMinute === null || caller.requestsPerDay === null) {
    throw new Error('enterprise key without custom limits');
  }
  return { perMinute: caller.requestsPerMinute, perDay: caller.requestsPerDay };
}
