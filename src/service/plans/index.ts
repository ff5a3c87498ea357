/**
 * The plans and their limits (the specification's Limits section). Code
 * outside this folder imports them from here (test/layout.test.ts checks it).
 *
 * @example PLAN_LIMITS.free.perMinute // 100
 */
export { limitsOf, PLAN_LIMITS, PLANS, type Plan } from './plans';
