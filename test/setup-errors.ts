// Every test file starts with the whole error catalogue registered, as the application does
// (src/app.module.ts): unit specs build services without the root that registers it.
import '../src/errors.js';
