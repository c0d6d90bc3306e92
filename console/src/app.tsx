import { useEffect, useState } from 'preact/hooks';
import { isAdmin, isSaasAdmin, lookAt, onSession, pendingStep, session as currentSession, signOut, type Session } from './api/session';
import { HOME, NAV } from './nav';
import { navigate, onLink, usePath, BASE } from './router';
import { PendingStep, SignIn } from './screens/SignIn';
import { Field } from './ui';

export function App() {
  const [session, set] = useState<Session | undefined>(currentSession());
  useEffect(() => onSession(set), []);
  const path = usePath();
  if (!session) return <SignIn />;
  const step = pendingStep(session);
  if (step) return <PendingStep session={session} step={step} />;
  if (!isAdmin(session)) return <NotAdmin session={session} />;
  const entry = NAV.find((n) => n.path === path.split('/')[0]);
  if (!entry) {
    queueMicrotask(() => navigate(HOME));
    return null;
  }
  const Screen = entry.screen;
  return (
    <Layout session={session} active={entry.path}>
      <Screen session={session} key={`${entry.path}:${session.target}`} />
    </Layout>
  );
}

function Layout({ session, active, children }: { session: Session; active: string; children: preact.ComponentChildren }) {
  const [menu, setMenu] = useState(false);
  const who = session.fullname || session.email || session.mobile || 'you';
  return (
    <div class="layout" onClick={onLink}>
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <header class="top">
        <button type="button" class="menu" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
          Menu
        </button>
        <strong>Admin console</strong>
        <span class="where">{session.target ? `store ${session.target}` : 'root'}</span>
        <span class="who">{who}</span>
        <button type="button" class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav id="nav" class={menu ? 'side open' : 'side'} aria-label="Screens">
        <ul>
          {NAV.map((n) => (
            <li key={n.path}>
              <a href={`${BASE}/${n.path}`} aria-current={n.path === active ? 'page' : undefined} onClick={() => setMenu(false)}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
        {isSaasAdmin(session) && <StoreTarget session={session} />}
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

// A SaaS administrator looks at any store: its calls then carry that store's header.
function StoreTarget({ session }: { session: Session }) {
  const [value, setValue] = useState(session.target);
  return (
    <form
      class="target"
      onSubmit={(e) => {
        e.preventDefault();
        lookAt(value.trim());
      }}
    >
      <Field label="Store codename (empty: root)" value={value} onInput={setValue} />
      <button>Look at this store</button>
    </form>
  );
}

function NotAdmin({ session }: { session: Session }) {
  return (
    <main class="signin" id="main">
      <h1>Admin console</h1>
      <section class="card" role="alert">
        <h2>This console is for administrators</h2>
        <p>
          You are signed in as {session.email ?? session.mobile}, whose role does not administer {session.store ? 'this store' : 'the service'}. Ask an owner or an
          administrator of your store for what you need.
        </p>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </section>
    </main>
  );
}
