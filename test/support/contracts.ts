import { readBundledContract } from '../../src/engine/contract/load';
import type { OpenApiDocument } from '../../src/engine/contract/document';
import { SPEC_PATH } from '../../src/project';

/** A contract of the project (one file, local `$ref`s only), read synchronously; v1's by default. */
export const loadSpec = (file: string = SPEC_PATH): OpenApiDocument => readBundledContract(file);
