import type { OpenApiDocument } from './document';
import { routeTable, type RouteTable } from './route-table';

/** One major version of the contract as it is served: its name, base path, document and route table. */
export interface ServedApi {
  /** `v1`, `v2`, ...: the label in metrics and logs. */
  readonly name: string;
  /** Where its operations are served: `/v1`. */
  readonly basePath: string;
  readonly contract: OpenApiDocument;
  readonly table: RouteTable;
}

/**
 * A version as served: the document of folder `openapi/vN/` is served under
 * `/vN`, whatever its `servers` say (they describe where it is deployed; a
 * document written elsewhere names its own hosts and paths, and two versions
 * must never share a base path).
 *
 * @example servedApi('v3', contract).table.match('GET', '/v3/orders')
 */
export function servedApi(name: string, contract: OpenApiDocument): ServedApi {
  const basePath = `/${name}`;
  return Object.freeze({ name, basePath, contract, table: routeTable(contract, basePath) });
}
