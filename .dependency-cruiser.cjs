// The import rules of src/ (docs/architecture.md): layers import only downward, features meet
// through what they export, and nothing goes round in a circle. `npm run lint:deps` checks them.
const FEATURE = '^src/(identity|messaging|operations)/[^/]+/|^src/access/';
// What a feature keeps to itself: its rows, its request shapes, its internal types, its storage.
const INTERNALS = '\\.(entity|dto|types|repository)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A file that imports itself through others: split the shared part out.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'Folders (layers, contexts, features) form a DAG: where two need each other, one talks through a domain event or a kernel type.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-knows-no-business',
      severity: 'error',
      comment: 'platform/ is infrastructure: it imports nothing above it.',
      from: { path: '^src/platform/' },
      to: { path: '^src/(kernel|identity|access|messaging|operations)/|^src/[^/]+\\.ts$' },
    },
    {
      name: 'kernel-imports-only-platform',
      severity: 'error',
      comment: 'kernel/ is the shared vocabulary: it imports platform/ and nothing above.',
      from: { path: '^src/kernel/' },
      to: { path: '^src/(identity|access|messaging|operations)/|^src/[^/]+\\.ts$' },
    },
    {
      name: 'features-do-not-import-the-root',
      severity: 'error',
      comment: 'main.ts, app.ts and app.module.ts compose the features; no feature imports them.',
      from: { path: FEATURE },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'no-reach-into-another-feature',
      severity: 'error',
      comment: "A feature uses another through its module's exports, never its entity, DTO, types or repository files.",
      from: { path: '^src/(identity|messaging|operations)/([^/]+)/' },
      to: { path: `^src/.*${INTERNALS}`, pathNot: ['^src/$1/$2/'] },
    },
    {
      name: 'no-reach-into-another-feature-from-access',
      severity: 'error',
      comment: "Access uses other features through their modules' exports, never their internals.",
      from: { path: '^src/access/' },
      to: { path: `^src/.*${INTERNALS}`, pathNot: ['^src/access/'] },
    },
    {
      name: 'typeorm-only-behind-repositories',
      severity: 'error',
      comment: 'Persistence lives behind repositories: only entities, repositories and platform/database import TypeORM; a service passes a Tx (platform/database/transactions.ts), never an EntityManager.',
      from: { path: '^src/', pathNot: ['\\.(entity|repository)\\.ts$', '^src/platform/database/'] },
      to: { path: '^node_modules/(typeorm|@nestjs/typeorm)/' },
    },
    {
      name: 'no-reach-into-access',
      severity: 'error',
      comment: "Other features use access through AccessService and its public files, never its internals.",
      from: { path: '^src/(identity|messaging|operations|kernel|platform)/' },
      to: { path: `^src/access/.*${INTERNALS}` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // src/, and TypeORM only to see who imports it (typeorm-only-behind-repositories).
    includeOnly: ['^src/', '^node_modules/(typeorm|@nestjs/typeorm)/'],
    exclude: { path: '\\.spec\\.ts$' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs'] },
  },
};
