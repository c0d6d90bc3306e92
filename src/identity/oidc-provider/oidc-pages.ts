import Handlebars from 'handlebars';

// The provider's pages: plain HTML forms, no script, every value escaped by the templates.
const hbs = Handlebars.create();

const layout = hbs.compile(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;box-sizing:border-box;margin:.4rem 0}input{padding:.5rem}button{padding:.6rem}.error{color:#b00020}</style>
</head><body><h1>{{title}}</h1>{{{content}}}</body></html>`);

const loginForm = hbs.compile(`{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
<form method="post" action="{{action}}">
<label for="username">Email or mobile</label><input id="username" name="username" autocomplete="username" required value="{{username}}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<form method="post" action="{{abort}}"><button type="submit">Cancel</button></form>`);

const totpForm = hbs.compile(`{{#if error}}<p class="error" role="alert">{{error}}</p>{{/if}}
<p>Enter the code your authenticator app shows.</p>
<form method="post" action="{{action}}">
<label for="code">Code</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required>
<button type="submit">Continue</button>
</form>
<p>No access to the app? Use one of your recovery codes.</p>
<form method="post" action="{{action}}">
<label for="recoveryCode">Recovery code</label><input id="recoveryCode" name="recoveryCode" autocomplete="off" required>
<button type="submit">Use the recovery code</button>
</form>
<form method="post" action="{{abort}}"><button type="submit">Cancel</button></form>`);

const consentForm = hbs.compile(`<p>The application <strong>{{client}}</strong> asks to:</p>
<ul>{{#each scopes}}<li>{{this}}</li>{{/each}}</ul>
<form method="post" action="{{action}}"><button type="submit">Allow</button></form>
<form method="post" action="{{abort}}"><button type="submit">Deny</button></form>`);

const message = hbs.compile(`<p>{{text}}</p>{{#if detail}}<p>{{detail}}</p>{{/if}}`);

// What each scope lets the application read, in words.
const SCOPE_WORDS: Record<string, string> = {
  openid: 'know who you are',
  email: 'read your email address',
  phone: 'read your mobile number',
  profile: 'read your name and picture',
  roles: 'read your store and roles',
  offline_access: 'stay signed in while you are away',
};

export function loginPage(opts: { action: string; abort: string; error?: string; username?: string }): string {
  return layout({ title: 'Sign in', content: loginForm(opts) });
}

export function totpPage(opts: { action: string; abort: string; error?: string }): string {
  return layout({ title: 'Two-step verification', content: totpForm(opts) });
}

export function consentPage(opts: { action: string; abort: string; client: string; scopes: string[] }): string {
  const scopes = opts.scopes.map((s) => SCOPE_WORDS[s] ?? s);
  return layout({ title: 'Allow access', content: consentForm({ ...opts, scopes }) });
}

export function messagePage(title: string, text: string): string {
  return layout({ title, content: message({ text }) });
}

// The provider's own errors: its standard code and description only (never a stack).
export function errorPage(error: unknown, description: unknown): string {
  return layout({ title: 'Sign-in error', content: message({ text: String(error ?? 'error'), detail: typeof description === 'string' ? description : undefined }) });
}

// `form` is the provider's own form (its hidden anti-forgery field), which the buttons submit.
export function logoutPage(form: string): string {
  const buttons = '<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button><button type="submit" form="op.logoutForm">Stay signed in</button>';
  return layout({ title: 'Sign out', content: `${form}${buttons}` });
}

export function loggedOutPage(): string {
  return messagePage('Signed out', 'You are signed out.');
}
