/**
 * The adoption rules handlers share: who may see an order, which moves an
 * order may make and who may make them, and an order as the API shows it.
 * Code outside this folder imports them from here.
 *
 * @example if (!canSee(caller, order)) return { status: 404, body: notFound(`order ${id} does not exist`) };
 */
export { canSee, closingRefusal, orderView } from './orders';
