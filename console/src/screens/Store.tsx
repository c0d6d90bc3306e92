import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import type { components } from '../api/schema';
import { isSaasAdmin, lookAt, storeName } from '../api/session';
import type { ScreenProps } from '../nav';
import { ErrorText, Field, Notice, Pager, Scope, SearchForm, Section, useAction, useLoad } from '../ui';

// The SaaS level's own store: always active (the API answers 403 RootStoreAlwaysActive).
const ROOT = 'root';

type StoreRecord = components['schemas']['StoreResponse'];

// The looked-at store's record (GET/PATCH /v1/store); for SaaS administrators, every store.
export default function StoreScreen({ session }: ScreenProps) {
  const record = useLoad(() => must(api.GET('/auth-api/v1/store')), []);
  return (
    <>
      <h1>Store</h1>
      <Scope session={session} />
      <ErrorText error={record.error} />
      {record.data && <EditStore key={record.data.store.id} store={record.data.store} where={storeName(session)} saas={isSaasAdmin(session)} onSaved={record.reload} />}
      {isSaasAdmin(session) && <AllStores onPick={lookAt} />}
    </>
  );
}

function EditStore({ store, where, saas, onSaved }: { store: StoreRecord; where: string; saas: boolean; onSaved: () => void }) {
  // Only a SaaS administrator (de)activates a store, and never the root.
  const activation = saas && store.codename !== ROOT;
  const [name, setName] = useState(store.name);
  const [fullname, setFullname] = useState(store.fullname);
  const [avatar, setAvatar] = useState(store.avatar);
  const [active, setActive] = useState(store.isActive);
  const [notice, setNotice] = useState<string>();
  const action = useAction();
  return (
    <Section title={`Store ${store.codename}`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await must(api.PATCH('/auth-api/v1/store', { body: { name, fullname, avatar, ...(activation && { isActive: active }) } }));
            setNotice(`Saved: ${where}.`);
            onSaved();
          });
        }}
      >
        {avatar && <img class="avatar" src={avatar} alt="" width={48} height={48} />}
        <Field label="Name" value={name} onInput={setName} required />
        <Field label="Full name" value={fullname} onInput={setFullname} />
        <Field label="Avatar URL" type="url" value={avatar} onInput={setAvatar} />
        {activation && (
          <div class="field check">
            <input id="store-active" type="checkbox" checked={active} onChange={(e) => setActive((e.target as HTMLInputElement).checked)} />
            <label for="store-active">Active (its users may sign in)</label>
          </div>
        )}
        <ErrorText error={action.error} />
        <Notice text={notice} />
        <button disabled={action.busy}>Save</button>
      </form>
    </Section>
  );
}

function AllStores({ onPick }: { onPick: (codename: string) => void }) {
  const [page, setPage] = useState(1);
  const [query, setQuery] = useState('');
  const list = useLoad(() => must(api.GET('/auth-api/v1/stores', { params: { query: { pageNumber: page, pageRowCount: 20, ...(query && { search: query }) } } })), [page, query]);
  return (
    <Section title="Every store">
      <SearchForm
        label="Search stores"
        onSearch={(text) => {
          setPage(1);
          setQuery(text);
        }}
      />
      <ErrorText error={list.error} />
      <ul class="list">
        {(list.data?.stores ?? []).map((s) => (
          <li key={s.id} class="row">
            <span>
              <strong>{s.name}</strong> ({s.codename}){!s.isActive && ' — inactive'}
            </span>
            <button type="button" class="secondary" onClick={() => onPick(s.codename)}>
              Look at it
            </button>
          </li>
        ))}
      </ul>
      {list.data?.paging && <Pager page={page} pages={list.data.paging.pageCount} total={list.data.paging.totalRowCount} onPage={setPage} />}
    </Section>
  );
}
