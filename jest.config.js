// Native ESM Jest (see ../shared/STACK-NOTES.md): ts-jest transpiles, `tsc --noEmit` type-checks.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  // The package's extension entry and the SDK packages (npm workspaces under packages/), as the
  // examples and the packages' tests import them: the sources under test.
  moduleNameMapper: {
    '^svc-auth/extension$': '<rootDir>/src/extension.ts',
    '^@svc/(client|react|nest)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // The browser suites (`*-browser.e2e-spec.ts`: the console, CORS and passkeys in Chromium) run
  // on the embedded defaults only: what they check is the pages and the browser's side, whose
  // database is the same service's (the API suites run on both). On PostgreSQL + Redis they would
  // add about a minute and a half to CI's 30.
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.DATABASE_URL ? ['-browser\\.e2e-spec\\.ts$'] : [])],
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/examples/*/test/**/*.e2e-spec.ts', '<rootDir>/packages/*/test/**/*.e2e-spec.ts', '<rootDir>/packages/*/src/**/*.spec.ts'],
  // The whole error catalogue, as src/app.module.ts registers it, for specs that build no app;
  // then the console without one library's expected warning.
  setupFiles: ['<rootDir>/test/setup-errors.ts', '<rootDir>/test/setup-console.ts'],
  globalSetup: '<rootDir>/test/global-setup.js',
  globalTeardown: '<rootDir>/test/global-teardown.js',
  testTimeout: 30000,
  // At the end, each skipped suite or test with the reason its title gives.
  reporters: ['default', '<rootDir>/test/skipped-reporter.js'],
  // Three workers on CI's two cores: the suites wait on I/O (sockets, child processes, timers) a
  // good part of the time, and with two workers the cores stood idle a quarter of it. The
  // PostgreSQL + Redis run on one machine: 419 s with two, 295 s with three.
  maxWorkers: 3,
  // A worker that is done leaves no handle open, but its exit frees its heap (each test file loads
  // the application into it again: a GB or more by the end of a run), and that took 1.2-1.6 s on
  // a loaded machine even after two files. Past Jest's 500 ms default the worker is killed and the
  // run ends with "A worker process has failed to exit gracefully".
  workerGracefulExitTimeout: 10_000,
};
