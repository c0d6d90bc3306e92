import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectSocket, listen } from '../../../test/event-clients.js';
import { expectError, login, PASSWORD, registerStore, startApp, unique, uniqueEmail, waitFor, type RegisteredStore, type TestApp } from '../../../test/helpers.js';
import supportTickets from '../index.js';

// The example extension mounted on the real service: its routes behind the service's guard,
// its table per store, its permissions, audit actions, topic, settings, errors and template.
const HEADER = 'svc-store-codename';
const API = '/tickets-api/v1';

interface Member {
  id: string;
  email: string;
  bearer: string;
}

async function member(t: TestApp, store: RegisteredStore, owner: string, roleId = 'tenantUser'): Promise<Member> {
  const email = uniqueEmail();
  const res = await t.http.post('/auth-api/users').set(HEADER, store.codename).set('Authorization', `Bearer ${owner}`).send({ email, password: PASSWORD, fullname: 'Member', roleId }).expect(201);
  return { id: res.body.user.id, email, bearer: (await login(t.http, email, PASSWORD, store.codename)).accessToken };
}

function as<R extends { set(name: string, value: string): R }>(req: R, store: RegisteredStore, bearer: string): R {
  return req.set(HEADER, store.codename).set('Authorization', `Bearer ${bearer}`);
}


// The apps with the extension are a deployment of their own (SERVICE_CODENAME): on Redis every app of
// one codename shares the notification queue and the outbox, and only these know the extension's
// templates and listeners (replicas of one deployment load the same extensions).
const OWN = { SERVICE_CODENAME: unique('tickets') };
describe('the support-tickets extension', () => {
  let t: TestApp;
  let store: RegisteredStore;
  let owner: string;
  let user: Member;
  beforeAll(async () => {
    t = await startApp({ env: OWN, extensions: [supportTickets], settings: { supportTickets: { maxOpenPerUser: 2 } } });
    store = await registerStore(t.http);
    owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
    user = await member(t, store, owner);
  });
  afterAll(() => t?.close());

  it('lets a user open tickets and list its own; the store administrators list and close them', async () => {
    const opened = await as(t.http.post(`${API}/tickets`), store, user.bearer).send({ subject: 'Cannot sign in' }).expect(201);
    expect(opened.body).toMatchObject({ status: 'OK', ticket: { ownerId: user.id, subject: 'Cannot sign in', status: 'open' } });
    const id = opened.body.ticket.id as string;
    const mine = await as(t.http.get(`${API}/tickets`), store, user.bearer).expect(200);
    expect(mine.body.tickets.map((x: { id: string }) => x.id)).toEqual([id]);
    expect(mine.body.paging).toMatchObject({ totalRowCount: 1 });
    // a tenantUser holds neither the role nor the permission of the store's list
    expectError(await as(t.http.get(`${API}/store-tickets`), store, user.bearer), 403, 'Forbidden');
    expectError(await as(t.http.post(`${API}/tickets/${id}/close`), store, user.bearer), 403, 'Forbidden');
    const all = await as(t.http.get(`${API}/store-tickets`), store, owner).expect(200);
    expect(all.body.tickets.map((x: { id: string }) => x.id)).toContain(id);
    const closed = await as(t.http.post(`${API}/tickets/${id}/close`), store, owner).expect(200);
    expect(closed.body.ticket).toMatchObject({ id, status: 'closed' });
    expectError(await as(t.http.post(`${API}/tickets/${id}/close`), store, owner), 409, 'TicketAlreadyClosed');
  });

  it('answers its own error codes, validation and the settings section', async () => {
    const someone = await member(t, store, owner);
    expectError(await as(t.http.post(`${API}/tickets/00000000-0000-4000-8000-000000000000/close`), store, owner), 404, 'TicketNotFound');
    expectError(await as(t.http.post(`${API}/tickets`), store, someone.bearer).send({ subject: '' }), 400, 'ValidationFailed');
    expectError(await as(t.http.post(`${API}/tickets`), store, someone.bearer).send({ subject: 'x', extra: 1 }), 400, 'UnknownField');
    await as(t.http.post(`${API}/tickets`), store, someone.bearer).send({ subject: 'one' }).expect(201);
    await as(t.http.post(`${API}/tickets`), store, someone.bearer).send({ subject: 'two' }).expect(201);
    // supportTickets.maxOpenPerUser: 2
    expectError(await as(t.http.post(`${API}/tickets`), store, someone.bearer).send({ subject: 'three' }), 409, 'TooManyOpenTickets');
  });

  it('goes through the service guard: no login, a login of another store, an API key where keys are refused', async () => {
    expectError(await t.http.post(`${API}/tickets`).set(HEADER, store.codename).send({ subject: 'x' }), 401, 'Unauthorized');
    const other = await registerStore(t.http);
    expectError(await t.http.get(`${API}/tickets`).set(HEADER, other.codename).set('Authorization', `Bearer ${user.bearer}`), 403, 'TenantMismatch');
    const key = await as(t.http.post('/auth-api/v1/apikeys'), store, user.bearer).send({ name: 'tickets' }).expect(201);
    await as(t.http.get(`${API}/tickets`), store, key.body.apiKey.key).expect(200);
    expectError(await as(t.http.post(`${API}/tickets`), store, key.body.apiKey.key).send({ subject: 'x' }), 401, 'PrincipalNotAccepted');
  });

  it('keeps each store to its own tickets', async () => {
    const opened = await as(t.http.post(`${API}/tickets`), store, owner).send({ subject: 'store A only' }).expect(201);
    const b = await registerStore(t.http);
    const bOwner = (await login(t.http, b.ownerEmail, PASSWORD, b.codename)).accessToken;
    const listed = await as(t.http.get(`${API}/store-tickets`), b, bOwner).expect(200);
    expect(listed.body.tickets).toEqual([]);
    expectError(await as(t.http.post(`${API}/tickets/${opened.body.ticket.id}/close`), b, bOwner), 404, 'TicketNotFound');
  });

  it('records its audit actions in the store chain, filterable, and the chain verifies', async () => {
    const opened = await as(t.http.post(`${API}/tickets`), store, owner).send({ subject: 'audited' }).expect(201);
    await as(t.http.post(`${API}/tickets/${opened.body.ticket.id}/close`), store, owner).expect(200);
    const logs = await as(t.http.get('/auth-api/v1/auditlogs').query({ action: 'ticket.*', pageRowCount: 100 }), store, owner).expect(200);
    const mine = logs.body.auditLogs.filter((e: { target: { id: string } | null }) => e.target?.id === opened.body.ticket.id);
    expect(mine.map((e: { action: string }) => e.action).sort()).toEqual(['ticket.closed', 'ticket.opened']);
    const verified = await as(t.http.get('/auth-api/v1/auditlogs/verify'), store, owner).expect(200);
    expect(verified.body).toMatchObject({ firstBrokenId: null });
  });

  it('adds its permissions to the catalogue: a grant lets a tenantUser list the store tickets (PBAC)', async () => {
    // the owner ships with what it hands out (docs/access-control.md)
    const pbac = await startApp({ env: OWN, extensions: [supportTickets], settings: { pbacIsActive: true, roleGrants: { tenantOwner: ['tickets.read', 'tickets.close'] } } });
    try {
      const s = await registerStore(pbac.http);
      const o = (await login(pbac.http, s.ownerEmail, PASSWORD, s.codename)).accessToken;
      const u = await member(pbac, s, o);
      expectError(await as(pbac.http.get(`${API}/store-tickets`), s, u.bearer), 403, 'PermissionDenied');
      await as(pbac.http.post('/auth-api/v1/permissiongrants'), s, o).send({ userId: u.id, permission: 'tickets.read', canDo: true }).expect(201);
      await as(pbac.http.get(`${API}/store-tickets`), s, u.bearer).expect(200);
      expectError(await as(pbac.http.post('/auth-api/v1/permissiongrants'), s, o).send({ userId: u.id, permission: 'tickets.nope', canDo: true }), 400, 'PermissionUnknown');
    } finally {
      await pbac.close();
    }
  });

  it('offers its topic on the event channel: the owner hears its ticket opened, another store hears nothing', async () => {
    const base = await listen(t);
    const client = await connectSocket(base, 'tickets', { token: user.bearer }, { headers: { [HEADER]: store.codename } });
    const b = await registerStore(t.http);
    const bOwner = (await login(t.http, b.ownerEmail, PASSWORD, b.codename)).accessToken;
    const stranger = await connectSocket(base, 'tickets', { token: bOwner }, { headers: { [HEADER]: b.codename } });
    try {
      client.socket.emit('subscribe', { topics: ['ticketOpened'] });
      await client.next('subscribed');
      stranger.socket.emit('subscribe', { topics: ['ticketOpened'] });
      await stranger.next('subscribed');
      const opened = await as(t.http.post(`${API}/tickets`), store, user.bearer).send({ subject: 'live' }).expect(201);
      const event = await waitFor('the ticketOpened event', () => client.events().find((e) => JSON.stringify(e).includes(opened.body.ticket.id)));
      expect(JSON.stringify(event)).toContain('live');
      expect(stranger.events()).toEqual([]);
    } finally {
      client.close();
      stranger.close();
    }
  });

  it("sends its template to the ticket's owner when an administrator closes it", async () => {
    const someone = await member(t, store, owner);
    const opened = await as(t.http.post(`${API}/tickets`), store, someone.bearer).send({ subject: 'printer on fire' }).expect(201);
    await as(t.http.post(`${API}/tickets/${opened.body.ticket.id}/close`), store, owner).expect(200);
    const inbox = await waitFor('the in-app notification', async () => {
      const res = await as(t.http.get('/notifications'), store, someone.bearer).expect(200);
      return res.body.notifications.find((n: { template: string }) => n.template === 'ticketClosed');
    });
    expect(inbox).toMatchObject({ subject: 'Ticket closed', body: 'Your ticket "printer on fire" was closed.' });
  });

  it('lists its routes in the OpenAPI document', async () => {
    const doc = await t.http.get('/docs-json').expect(200);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining([`${API}/tickets`, `${API}/store-tickets`, `${API}/tickets/{id}/close`]));
  });
});

describe('the support-tickets extension, settings and listener', () => {
  it('opens a welcome ticket for each new user when its settings ask', async () => {
    const t = await startApp({ env: OWN, extensions: [supportTickets], settings: { supportTickets: { welcomeTicket: true } } });
    try {
      const store = await registerStore(t.http);
      const owner = (await login(t.http, store.ownerEmail, PASSWORD, store.codename)).accessToken;
      const user = await member(t, store, owner);
      const tickets = await waitFor('the welcome ticket', async () => {
        const res = await as(t.http.get(`${API}/tickets`), store, user.bearer).expect(200);
        return res.body.tickets.length ? res.body.tickets : undefined;
      });
      expect(tickets[0]).toMatchObject({ ownerId: user.id, status: 'open' });
    } finally {
      await t.close();
    }
  });

  it('refuses bad settings of its section at boot, in the one configuration error', async () => {
    const refused = startApp({ extensions: [supportTickets], settings: { supportTickets: { maxOpenPerUser: 0, colour: 'red' } } });
    await expect(refused).rejects.toThrow(/settings\.supportTickets\.maxOpenPerUser: maxOpenPerUser must not be less than 1/);
    await expect(refused).rejects.toThrow(/settings\.supportTickets\.colour: property colour should not exist/);
    // without the extension, its section is an unknown key
    await expect(startApp({ settings: { supportTickets: { maxOpenPerUser: 3 } } })).rejects.toThrow(/settings: unknown key "supportTickets"/);
  });
});
