/**
 * What every handler receives besides its request (its second argument,
 * with `caller` added per request): put your storage and services here.
 */
// biome-ignore lint/suspicious/noEmptyInterface: empty until the project adds its services.
export interface HandlerContext {}

/**
 * The context of the handlers of one version of the contract.
 *
 * @example handlerContexts('v1') // {}
 */
export function handlerContexts(_version: string): HandlerContext {
  return {};
}
