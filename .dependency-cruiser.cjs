// The import rules of src/ (docs/architecture.md, ADR 14): the top-level folders are a stack and
// import only downward, features meet through what they export, and nothing goes round in a
// circle. `npm run lint:deps` checks them.

// The layers, lowest first. A folder imports its own layer and the ones before it, never one after:
// where a lower layer needs an answer from a higher one, it asks through a kernel port (an
// abstract class in src/kernel/ that the higher layer binds, e.g. AuditLog, Recipients).
const LAYERS = ['platform', 'kernel', 'delivery', 'identity', 'channels', 'operations'];
// The feature layers: each subfolder is one feature.
const FEATURE_LAYERS = LAYERS.slice(2).join('|');
// What a feature keeps to itself: its rows, its request shapes, its internal types, its storage.
const INTERNALS = '\\.(entity|dto|types|repository)\\.ts$';

// One rule per layer: nothing in it imports a layer above it, nor the root files that compose them.
const layerRules = LAYERS.map((layer, i) => ({
  name: `${layer}-imports-only-below`,
  severity: 'error',
  comment: `src/${layer}/ imports ${['itself', ...LAYERS.slice(0, i)].join(', ')}: never ${LAYERS.slice(i + 1).join(', ') || 'a root file'}${i + 1 < LAYERS.length ? ' nor a root file' : ''}.`,
  from: { path: `^src/${layer}/` },
  to: { path: [...LAYERS.slice(i + 1).map((above) => `^src/${above}/`), '^src/[^/]+\\.ts$'] },
}));

// A folder that is not a layer would escape the rules above.
const onlyLayers = {
  name: 'only-known-layers',
  severity: 'error',
  comment: `src/ holds the layers (${LAYERS.join(', ')}) and the root files that compose them: a new top-level folder joins LAYERS first.`,
  from: { path: '^src/' },
  to: { path: '^src/[^/]+/', pathNot: LAYERS.map((layer) => `^src/${layer}/`) },
};

// The settings mechanism knows no section: the features declare theirs and the root composes
// them (src/settings.ts, ADR 27). Already implied by the layer rule; stated so a move says why.
const configKnowsNoFeature = {
  name: 'config-knows-no-feature',
  severity: 'error',
  comment: 'src/platform/config/ loads and checks sections it is given: a feature owns its settings class (<feature>.settings.ts) and src/settings.ts composes them.',
  from: { path: '^src/platform/config/' },
  to: { path: [`^src/(${LAYERS.slice(1).join('|')})/`, '^src/[^/]+\\.ts$'] },
};

module.exports = {
  forbidden: [
    ...layerRules,
    onlyLayers,
    configKnowsNoFeature,
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
      comment: 'Folders (features inside a layer) form a DAG: where two need each other, one talks through a domain event or a kernel port.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-reach-into-another-feature',
      severity: 'error',
      comment: "A feature uses another through its module's exports, never its entity, DTO, types or repository files.",
      from: { path: `^src/(${FEATURE_LAYERS})/([^/]+)/` },
      to: { path: `^src/.*${INTERNALS}`, pathNot: ['^src/$1/$2/'] },
    },
    {
      name: 'typeorm-only-behind-repositories',
      severity: 'error',
      comment: 'Persistence lives behind repositories: only entities, repositories and platform/database import TypeORM; a service passes a Tx (platform/database/transactions.ts), never an EntityManager.',
      from: { path: '^src/', pathNot: ['\\.(entity|repository)\\.ts$', '^src/platform/database/', '^src/extension\\.ts$'] },
      to: { path: '^node_modules/(typeorm|@nestjs/typeorm)/' },
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
