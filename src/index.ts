// The package's main entry, for teams that install the service in their own repository and
// start it with their extensions (docs/extending.md): `createApp({ extensions })`.
// What an extension itself uses is the "./extension" entry (src/extension.ts).
export { createApp, type AppSources, type RunningApp } from './app.js';
export { loadExtensions } from './extensions.js';
