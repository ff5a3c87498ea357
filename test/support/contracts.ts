import { readBundledContract, type OpenApiDocument } from '../../src/engine/contract';
import { SPEC_PATH } from '../../src/project';

/** A contract of the project (one file, local `$ref`s only), read synchronously; v1's by default. */
export const loadSpec = (file: string = SPEC_PATH): OpenApiDocument => readBundledContract(file);
