/** `npm test`: TypeScript through SWC, the tests under test/. */
module.exports = {
  testEnvironment: 'node',
  testTimeout: 60_000,
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
};
