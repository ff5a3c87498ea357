/** The engine's own tests: documents of their own, no store. Run by the repository's `npm test` too (its `engine` project). */
module.exports = {
  displayName: 'engine',
  testEnvironment: 'node',
  testTimeout: 60_000,
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
};
