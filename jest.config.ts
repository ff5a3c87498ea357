import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  // Two cores here; suites that spawn servers are I/O-bound.
  maxWorkers: 2,
  testTimeout: 30_000,
  globalSetup: '<rootDir>/test/support/global-setup.ts',
};

export default config;
