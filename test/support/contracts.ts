import type { OpenApiDocument } from '@spec-first/engine';
import { readBundledContract } from '@spec-first/engine/testing';
import { SPEC_PATH } from '../../src/project';

/** A contract of the project (one file, local `$ref`s only), read synchronously; v1's by default. */
export const loadSpec = (file: string = SPEC_PATH): OpenApiDocument => readBundledContract(file);
