/**
 * The public surface of the engine's `contract` part. Reading a contract:
 * loading (bundling split files), the document model, route tables, names,
 * schemas, media types, versions, deprecation and the response conformance
 * check. Code outside src/engine imports this part from here, never from one
 * of its files (test/layout.test.ts checks it).
 *
 * @example const contract = await loadContract('openapi/v1/openapi.yaml'); const api = servedApi('v1', contract);
 */
export { deprecationHeaders } from './deprecation';
export { HTTP_METHODS, OPENAPI_32_METHODS, isOpenApi32, listOperations } from './document';
export type { OpenApiDocument, OperationObject, SpecOperation } from './document';
export { holdsNames, isExtension, withoutExtensions } from './extensions';
export { int64Format } from './formats';
export { describesEventFields, itemSchemaPointer } from './item-schema';
export { ContractLoadError, loadContract, readBundledContract } from './load';
export { mediaKind } from './media-types';
export { derivedName, identifierOf, operationNames } from './names';
export { deref, escapePointer, pointerSegments } from './refs';
export { VIOLATION_KINDS, responseConformance } from './response-conformance';
export type { SentResponse } from './response-conformance';
export { routeTable } from './route-table';
export type { RouteTable } from './route-table';
export { schemaValidator } from './schemas';
export type { SchemaValidator } from './schemas';
export { servedApi } from './served-api';
export type { ServedApi } from './served-api';
export { contractVersions, contractVersionsIn } from './versions';
