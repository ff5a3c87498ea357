/** The toolchain's own tests. Run by the repository's `npm test` too (its `toolchain` project). */
module.exports = {
  displayName: 'toolchain',
  testEnvironment: 'node',
  testTimeout: 60_000,
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
};
