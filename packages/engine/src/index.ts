/**
 * The engine's whole public surface. `createEngine` serves OpenAPI
 * documents as an Express app; the handler types derive every request and
 * response of an operation from the code openapi-typescript generates; the
 * rest is what handlers, credential checks and clients built on the same
 * documents need. Everything else in this package is its own.
 *
 * @example
 * import { createEngine } from '@spec-first/engine';
 * const engine = await createEngine({ documents: [{ name: 'v1', document: 'openapi.yaml', handlers }] });
 * engine.app.listen(3000);
 */
export { createEngine, credentialNames } from './create-engine';
export type { Engine, EngineDocument, EngineOptions } from './create-engine';
export { loadContract as loadDocument } from './contract/load';
export { contractVersionsIn as documentsIn } from './contract/versions';
export type { OpenApiDocument } from './contract/document';
export { contextOf } from './context/request-context';
export type { Principal } from './context/request-context';
export type { CredentialCheck } from './security/authenticate';
export type { Stage } from './stage/stage';
export { ApiError, errorBody } from './errors/api-error';
export { DependencyUnavailable } from './errors/unavailable';
export { notImplementedHandler } from './handlers/stub';
export type { Stub } from './handlers/stub';
export type { HandlerOf as Handler, HandlerRequest, HandlerResponse, OperationId, RegistryOf as HandlerRegistry } from './handlers/types';
export { authorizationValue, placementOf } from './credentials/placement';
export { readEvent } from './response/sequential';
