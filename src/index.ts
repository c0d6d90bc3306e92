// The package's main entry, for teams that install the service in their own repository and
// start it with their extensions (docs/extending.md): `bootstrap({ extensions })` starts it as
// `npm start` does; `createApp({ extensions })` builds it for the caller to listen and stop.
// What an extension itself uses is the "./extension" entry (src/extension.ts).
export { createApp, type AppSources, type RunningApp } from './app.js';
export { bootstrap, type BootstrapOptions, type RunningService } from './bootstrap.js';
export { loadExtensions } from './extensions.js';
