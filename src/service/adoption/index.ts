/**
 * The adoption rules handlers share: who may see an order, which moves an
 * order may make and who may make them, an order as the API shows it, and
 * how a conditional write is retried.
 * Code outside this folder imports them from here.
 *
 * @example if (!canSee(caller, order)) return { status: 404, body: notFound(`order ${id} does not exist`) };
 */
export { canSee, orderView, roleRefusal, stateRefusal } from './orders';
export { compareAndSet } from './compare-and-set';
