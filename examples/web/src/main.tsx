import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient, webStorage } from '@svc/client';
import { SvcProvider } from '@svc/react';
import { App } from './App.js';

// Where the service is and which store this app signs users into: `?service=` and `?store=` in
// the address, else VITE_SERVICE_URL and VITE_STORE at build time, else `npm start`'s defaults
// (http://localhost:3000 and its sample store).
const params = new URLSearchParams(location.search);
const serviceUrl = params.get('service') ?? import.meta.env.VITE_SERVICE_URL ?? 'http://localhost:3000';
const store = params.get('store') ?? import.meta.env.VITE_STORE ?? 'sample';

// The session in localStorage: a reload (or another tab) stays signed in.
const client = createClient({ baseUrl: serviceUrl, store, storage: webStorage(), storageKey: `svc.session.${store}` });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SvcProvider client={client}>
      <App store={store} />
    </SvcProvider>
  </StrictMode>,
);
