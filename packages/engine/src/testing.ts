/**
 * What tests and the tools built on the same documents (code generators,
 * contract fuzzers, breaking-change checks) read besides the engine's door:
 * the document model and its walks, the schema validator, the stream
 * formats, and single stages to drive without a server. Nothing here is
 * needed to serve a document.
 *
 * @example
 * import { listOperations, loadDocument } from '@spec-first/engine/testing';
 * for (const op of listOperations(await loadDocument('openapi.yaml'))) console.log(op.operationId);
 */
export { loadContract as loadDocument, ContractLoadError, readBundledContract } from './contract/load';
export { contractVersions } from './contract/versions';
export type { ContractVersionFiles } from './contract/versions';
export { HTTP_METHODS, isOpenApi32, listOperations } from './contract/document';
export type { OpenApiDocument, OperationObject, SpecOperation } from './contract/document';
export { deprecationHeaders } from './contract/deprecation';
export { holdsNames, isExtension } from './contract/extensions';
export { int64Format } from './contract/formats';
export { describesEventFields } from './contract/item-schema';
export { mediaKind } from './contract/media-types';
export { derivedName, identifierOf, operationNames } from './contract/names';
export { deref, escapePointer, pointerSegments } from './contract/refs';
export { routeTable } from './contract/route-table';
export { schemaValidator } from './contract/schemas';
export type { CredentialPlacement, DeclaredScheme } from './credentials/placement';
export { contextOf } from './context/request-context';
export { ResponseHeaders } from './context/response-headers';
export { notImplemented } from './errors/api-error';
export { isUnavailable } from './errors/unavailable';
export { buildOperationMocks } from './mock/mock-responses';
export { errorMapper } from './pipeline/error-response';
export { operationResolver } from './pipeline/operation-names';
export { assignRequestId } from './pipeline/request-id';
export { responseSampler } from './pipeline/response-sampling';
export { readItems } from './request/items';
export type { ItemReading } from './request/items';
export { headerName } from './response/header-name';
export { integerText } from './response/integer-text';
export { eventData, readEvent, sendItems } from './response/sequential';
export { authenticationOf, effectiveSecurity } from './security/requirements';
export { asMiddleware } from './stage/stage';
