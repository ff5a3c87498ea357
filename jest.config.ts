import type { Config } from 'jest';

const transform: Config['transform'] = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
};

/** Suites about the API: they run on every backend. The others are about SQLite, files and processes. */
const API_SUITES = [
  'pets',
  'paging',
  'idempotency',
  'sunset',
  'versions',
  'errors',
  'auth',
  'rate-limits',
  'client',
  'client-v2',
  'unavailable',
  'metrics',
  'request-ids',
  'hostile-connections',
  'hostile-auth',
  'hostile-bodies',
  'hostile-streams',
  'security-schemes',
  'adoption',
  'adoption-crash',
];
const POSTGRES_ONLY = ['multi-instance', 'postgres-fault'];
/**
 * End-to-end suites (`npm run test:e2e`): they drive the project's tools and processes whole, each taking
 * half a minute or more here: copies of the project per third-party document, the scaffolder, the dev loop,
 * the runtime checks, the keys CLI, api:diff, the docs page in a browser, the cluster of workers. CI runs them
 * too; a newcomer's `npm test` leaves them out.
 */
const E2E_SUITES = ['third-party-documents', 'new-project', 'scaffold', 'dev', 'runtime', 'keys-cli', 'api-diff', 'docs-browser', 'workers'];

const hasPostgres = /^postgres(ql)?:\/\//.test(process.env['DATABASE_URL'] ?? '');
const hasRedis = /^rediss?:\/\//.test(process.env['REDIS_URL'] ?? '');
const runPostgres = hasPostgres && hasRedis;

if (!runPostgres) {
  const why = `DATABASE_URL=postgres://... and REDIS_URL=redis://... are not both set`;
  if (process.env['CI'] === 'true') {
    throw new Error(`CI must run the PostgreSQL+Redis suites, but ${why} (.ci/run starts both servers).`);
  }
  console.warn(
    `\n*** SKIPPED: the PostgreSQL+Redis project (${[...API_SUITES, ...POSTGRES_ONLY].join(', ')}): ${why}.` +
      '\n*** Only the SQLite project runs. See the README section "Tests".\n',
  );
}

/** In this repository the engine is read from its sources, as tsconfig.json's `paths` say; the built server reads its compiled package. */
const moduleNameMapper = {
  '^@spec-first/engine$': '<rootDir>/packages/engine/src/index.ts',
  '^@spec-first/engine/testing$': '<rootDir>/packages/engine/src/testing.ts',
  '^@spec-first/toolchain$': '<rootDir>/packages/toolchain/src/index.ts',
};

const suites = (names: string[]): string[] => names.map((name) => `<rootDir>/test/${name}.test.ts`);

const config: Config = {
  // Two cores here; suites that spawn servers are I/O-bound.
  maxWorkers: 2,
  testTimeout: 30_000,
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    // The engine package's own tests, as its own configuration runs them.
    '<rootDir>/packages/engine',
    '<rootDir>/packages/toolchain',
    {
      displayName: 'sqlite',
      testEnvironment: 'node',
      testTimeout: 30_000,
      transform,
      moduleNameMapper,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [...POSTGRES_ONLY, ...E2E_SUITES].map((name) => `/test/${name}\\.test\\.ts$`),
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      testTimeout: 60_000,
      transform,
      moduleNameMapper,
      testMatch: suites(E2E_SUITES),
    },
    ...(runPostgres
      ? [
          {
            displayName: 'postgres+redis',
            testEnvironment: 'node',
            testTimeout: 60_000,
            transform,
            moduleNameMapper,
            testMatch: suites([...API_SUITES, ...POSTGRES_ONLY]),
            setupFiles: ['<rootDir>/test/support/use-postgres.ts'],
          },
        ]
      : []),
  ],
};

export default config;
