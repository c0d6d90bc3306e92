import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { codeAt, TOTP_STEP_MS, wrongCode } from './totp-codes.js';
import { DataSource } from 'typeorm';
import { ManualClock } from '../src/platform/clock/clock.js';
import { AuditRecorderService } from '../src/operations/audit/audit-recorder.service.js';
import { mintMachineToken } from '../src/identity/m2m/machine-token.js';
import { SocialService } from '../src/identity/social/social.service.js';
import { login, PASSWORD, registerStore, startApp, unique, uniqueEmail, type RegisteredStore, type TestApp } from './helpers.js';
import { remoteSessionSettings, startRemoteSessionService, type RemoteSessionPeer } from './oauth-peers.js';

// The account actions of the audit log, one test each: the action happens, its entry is there
// with who did it to whom and how it went, and the entries carry no password, code or token.

const LOGS = '/auth-api/v1/auditlogs';
const HEADER = 'svc-store-codename';
const V = '/auth-api/verification-services';
const MFA = '/auth-api/mfa';
const STEP = TOTP_STEP_MS;
const NEW_PASSWORD = 'a brand new secret';

type Entry = Record<string, unknown> & { action: string; outcome: string; reason: string | null; actor: { type: string; id: string | null; roleId?: string | null }; target: { type: string; id: string | null } | null; details: Record<string, unknown> | null };

interface Owner {
  store: RegisteredStore;
  token: string;
  sessionId: string;
}

async function ownerOfNewStore(t: TestApp): Promise<Owner> {
  const store = await registerStore(t.http);
  const { accessToken, sessionId } = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
  return { store, token: accessToken, sessionId };
}

// The client's user agent, which entries of its requests carry.
const AGENT = 'audit-test-client/1.0';

function as(t: TestApp, codename: string, token: string) {
  return {
    get: (path: string) => t.http.get(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`).set('User-Agent', AGENT),
    post: (path: string, body: object = {}) => t.http.post(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`).set('User-Agent', AGENT).send(body),
    patch: (path: string, body: object = {}) => t.http.patch(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`).set('User-Agent', AGENT).send(body),
    delete: (path: string, body: object = {}) => t.http.delete(path).set(HEADER, codename).set('Authorization', `Bearer ${token}`).set('User-Agent', AGENT).send(body),
  };
}

async function addUser(t: TestApp, o: Owner, body: Record<string, unknown> = {}): Promise<{ id: string; email: string }> {
  const email = uniqueEmail();
  const res = await as(t, o.store.codename, o.token).post('/auth-api/users', { email, password: PASSWORD, fullname: 'Member', ...body }).expect(201);
  return { id: res.body.user.id, email };
}

// The queue written, then the store's entries of one action (newest first) through the route.
async function entries(t: TestApp, o: Owner, action: string): Promise<Entry[]> {
  await t.app.get(AuditRecorderService).flush();
  const res = await as(t, o.store.codename, o.token).get(`${LOGS}?pageRowCount=100&action=${encodeURIComponent(action)}`).expect(200);
  return res.body.auditLogs as Entry[];
}

function expectNoSecret(list: Entry[], ...secrets: string[]): void {
  const text = JSON.stringify(list);
  for (const s of [PASSWORD, NEW_PASSWORD, ...secrets]) expect(text).not.toContain(s);
  expect(text).not.toMatch(/passwordHash|secretCode|accessToken|refreshToken/);
}



const FLOWS = { 'email-verification': { enabled: true }, 'mobile-verification': { enabled: true }, 'password-reset-by-email': { enabled: true }, 'password-reset-by-mobile': { enabled: true } };
const billing = generateKeyPairSync('ed25519');
const impostor = generateKeyPairSync('ed25519');

describe('audit log: account actions', () => {
  let t: TestApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startApp({
      clock,
      settings: {
        userRegisterIsPublic: true,
        secondaryIdentifierPresence: 'optional',
        verification: { verificationMode: 'testMode', flows: FLOWS },
        machineTokens: { services: [{ name: 'billing', publicKey: billing.publicKey.export({ type: 'spki', format: 'pem' }) as string }], machineToMachineBlockList: [], allowedM2MClients: [] },
      },
    });
  });
  afterAll(() => t?.close());

  it('user.created: by an administrator, by a public registration, and a store owner registering', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const registered = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, o.store.codename).set('User-Agent', AGENT).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Self' }).expect(201);
    const selfId = registered.body.user.id as string;
    const publicUser = await t.http.post('/auth-api/users').set(HEADER, o.store.codename).send({ email: uniqueEmail(), password: PASSWORD, fullname: 'Public' }).expect(201);
    const publicId = publicUser.body.user.id as string;
    const list = await entries(t, o, 'user.created');
    expect(list.find((e) => e.target?.id === member.id)).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId }, details: { via: 'admin' } });
    // a self-registration is known by its address and agent, like every other anonymous act
    expect(list.find((e) => e.target?.id === selfId)).toMatchObject({ outcome: 'success', actor: { type: 'anonymous', id: null }, details: { via: 'registration' }, ip: expect.stringMatching(/\d/), userAgent: AGENT, requestId: expect.any(String) });
    expect(list.find((e) => e.target?.id === publicId)).toMatchObject({ outcome: 'success', actor: { type: 'anonymous', id: null }, details: { via: 'registration' } });
    // The owner's registration is written with its store, in the same transaction: no flush needed.
    const rows: { actorType: string; targetId: string }[] = await t.app.get(DataSource).query(`SELECT * FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.created' AND "targetId" = $2`, [o.store.storeId, o.store.ownerId]);
    expect(rows).toHaveLength(1);
    expectNoSecret(list);
  });

  it('user.updated: the names of the fields an administrator changed, never their values', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    await as(t, o.store.codename, o.token).patch(`/auth-api/v1/users/${member.id}`, { fullname: 'Renamed Person', password: NEW_PASSWORD }).expect(200);
    const [entry, ...rest] = await entries(t, o, 'user.updated');
    expect(rest).toHaveLength(0);
    expect(entry).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId }, target: { type: 'user', id: member.id } });
    expect((entry.details!.fields as string[]).sort()).toEqual(['fullname', 'password']);
    expect(JSON.stringify(entry)).not.toContain('Renamed Person');
    expectNoSecret([entry]);
  });

  it('user.deleted: who deleted whom', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    await as(t, o.store.codename, o.token).delete(`/auth-api/v1/users/${member.id}`).expect(200);
    const [entry] = await entries(t, o, 'user.deleted');
    expect(entry).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId }, target: { type: 'user', id: member.id } });
  });

  it('user.password.changed: one\'s own new password, not a user.updated', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const session = await login(t.http, member.email, PASSWORD, o.store.codename);
    await as(t, o.store.codename, session.accessToken).patch(`/auth-api/v1/users/${member.id}`, { currentPassword: PASSWORD, password: NEW_PASSWORD }).expect(200);
    const [entry] = await entries(t, o, 'user.password.changed');
    expect(entry).toMatchObject({ outcome: 'success', actor: { type: 'user', id: member.id }, target: { type: 'user', id: member.id }, sessionId: session.sessionId });
    expect((await entries(t, o, 'user.updated')).filter((e) => e.target?.id === member.id)).toHaveLength(0);
    expectNoSecret([entry]);
  });

  it('user.password.reset and user.verification.completed: the verification flows', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const c = o.store.codename;
    const verifyCode = (await t.http.post(`${V}/email-verification/start`).set(HEADER, c).send({ email: member.email }).expect(200)).body.secretCode as string;
    await t.http.post(`${V}/email-verification/complete`).set(HEADER, c).set('User-Agent', AGENT).send({ email: member.email, secretCode: verifyCode }).expect(200);
    const resetCode = (await t.http.post(`${V}/password-reset-by-email/start`).set(HEADER, c).send({ email: member.email }).expect(200)).body.secretCode as string;
    await t.http.post(`${V}/password-reset-by-email/complete`).set(HEADER, c).set('User-Agent', AGENT).send({ email: member.email, secretCode: resetCode, password: NEW_PASSWORD }).expect(200);
    const [reset] = await entries(t, o, 'user.password.reset');
    expect(reset).toMatchObject({ outcome: 'success', actor: { type: 'user', id: member.id }, target: { type: 'user', id: member.id }, details: { flow: 'password-reset-by-email' } });
    const verified = await entries(t, o, 'user.verification.completed');
    expect(verified.map((e) => e.details!.flow).sort()).toEqual(['email-verification', 'password-reset-by-email']);
    expect(verified[0]).toMatchObject({ outcome: 'success', target: { type: 'user', id: member.id } });
    expectNoSecret([reset, ...verified], verifyCode, resetCode, member.email);
    // Where the request came from, as for every entry of a request.
    for (const e of [reset, ...verified]) expect(e).toMatchObject({ ip: expect.any(String), userAgent: AGENT, requestId: expect.any(String) });
  });

  it('user.factor.enrolled / removed and user.2fa.passed / failed: the authenticator app and recovery codes', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const c = o.store.codename;
    const first = await login(t.http, member.email, PASSWORD, c);
    const api = as(t, c, first.accessToken);
    const setup = await api.post(`${MFA}/totp/setup`).expect(200);
    const secret = setup.body.secret as string;
    const confirm = await api.post(`${MFA}/totp/confirm`, { code: codeAt(secret, clock) }).expect(200);
    const recoveryCodes = confirm.body.recoveryCodes as string[];
    clock.advance(STEP);
    await api.post(`${MFA}/recovery/regenerate`, { code: codeAt(secret, clock) }).expect(200);
    clock.advance(STEP);

    // A pending sign-in: a wrong code, then a right one.
    const pending = await login(t.http, member.email, PASSWORD, c);
    expect(pending.body.sessionNeedsTotp2FA).toBe(true);
    const wrong = wrongCode(secret, clock);
    await as(t, c, pending.accessToken).post(`${MFA}/totp/verify`, { code: wrong }).expect(403);
    await as(t, c, pending.accessToken).post(`${MFA}/totp/verify`, { code: codeAt(secret, clock) }).expect(200);
    clock.advance(STEP);
    await api.delete(`${MFA}/totp`, { password: PASSWORD }).expect(200);

    const enrolled = await entries(t, o, 'user.factor.enrolled');
    expect(enrolled.map((e) => e.details!.factor).sort()).toEqual(['recoveryCodes', 'totp']);
    for (const e of enrolled) expect(e).toMatchObject({ outcome: 'success', actor: { type: 'user', id: member.id }, target: { type: 'user', id: member.id } });
    const [removed] = await entries(t, o, 'user.factor.removed');
    expect(removed).toMatchObject({ outcome: 'success', actor: { id: member.id }, target: { type: 'user', id: member.id }, details: { factor: 'totp', by: 'password' } });
    const [failed] = await entries(t, o, 'user.2fa.failed');
    expect(failed).toMatchObject({ outcome: 'failure', reason: 'wrong_code', actor: { type: 'user', id: member.id }, target: { type: 'session', id: pending.sessionId }, details: { factor: 'totp' } });
    const [passed] = await entries(t, o, 'user.2fa.passed');
    expect(passed).toMatchObject({ outcome: 'success', actor: { id: member.id }, target: { type: 'session', id: pending.sessionId }, details: { factor: 'totp' } });
    expectNoSecret([...enrolled, removed, failed, passed], secret, wrong, ...recoveryCodes);
    for (const e of [...enrolled, removed, failed, passed]) expect(e).toMatchObject({ ip: expect.any(String), userAgent: AGENT, requestId: expect.any(String), sessionId: expect.any(String) });
  });

  it('user.2fa.passed / failed: a recovery code in place of the app', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const c = o.store.codename;
    const first = await login(t.http, member.email, PASSWORD, c);
    const setup = await as(t, c, first.accessToken).post(`${MFA}/totp/setup`).expect(200);
    const confirm = await as(t, c, first.accessToken).post(`${MFA}/totp/confirm`, { code: codeAt(setup.body.secret, clock) }).expect(200);
    clock.advance(STEP);
    const pending = await login(t.http, member.email, PASSWORD, c);
    await as(t, c, pending.accessToken).post(`${MFA}/recovery`, { code: 'aaaa-bbbb-cccc' }).expect(403);
    await as(t, c, pending.accessToken).post(`${MFA}/recovery`, { code: confirm.body.recoveryCodes[0] }).expect(200);
    const [failed] = await entries(t, o, 'user.2fa.failed');
    expect(failed).toMatchObject({ outcome: 'failure', reason: 'wrong_code', details: { factor: 'recoveryCode' }, target: { id: pending.sessionId } });
    const [passed] = await entries(t, o, 'user.2fa.passed');
    expect(passed).toMatchObject({ outcome: 'success', details: { factor: 'recoveryCode' }, actor: { id: member.id } });
    expectNoSecret([failed, passed], setup.body.secret, ...confirm.body.recoveryCodes);
  });

  it('user.factor.removed: an administrator\'s reset of every factor', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    await as(t, o.store.codename, o.token).delete(`/auth-api/v1/users/${member.id}/mfa`).expect(200);
    const [entry] = await entries(t, o, 'user.factor.removed');
    expect(entry).toMatchObject({ outcome: 'success', actor: { type: 'user', id: o.store.ownerId }, target: { type: 'user', id: member.id }, details: { factor: 'all' } });
  });

  it('session.ended: one\'s own sessions, one of them, and an administrator\'s end of a user\'s sessions, with the count', async () => {
    const o = await ownerOfNewStore(t);
    const member = await addUser(t, o);
    const c = o.store.codename;
    const a = await login(t.http, member.email, PASSWORD, c);
    const b = await login(t.http, member.email, PASSWORD, c);
    await login(t.http, member.email, PASSWORD, c);
    // The clock moves between events: the list is newest first by time.
    await as(t, c, a.accessToken).delete(`/auth-api/sessions/${b.sessionId}`).expect(200);
    clock.advance(5);
    await as(t, c, a.accessToken).delete('/auth-api/sessions').expect(200);
    clock.advance(5);
    await login(t.http, member.email, PASSWORD, c);
    await as(t, c, o.token).delete(`/auth-api/v1/users/${member.id}/sessions`).expect(200);
    const list = (await entries(t, o, 'session.ended')).reverse();
    expect(list.map((e) => [e.actor.id, e.target?.type, e.details])).toEqual([
      [member.id, 'session', { count: 1 }],
      [member.id, 'user', { count: 1 }],
      [o.store.ownerId, 'user', { count: 2 }],
    ]);
    expect(list[0]).toMatchObject({ target: { id: b.sessionId }, sessionId: a.sessionId });
    expect(list[2]).toMatchObject({ target: { id: member.id }, actor: { type: 'user', roleId: 'tenantOwner' } });
  });

  it('user.social.linked: a registration with a socialCode links the account in the user\'s transaction', async () => {
    const o = await ownerOfNewStore(t);
    // The provider's part is the social login suite's: the code is issued as its callback does.
    const landed = await t.app.get(SocialService).finishFlow({ provider: 'google', storeId: o.store.storeId, redirectUrl: 'https://app.example.com/landing', startedAt: clock.now().getTime() }, { providerUserId: unique('g'), emailVerified: false, email: uniqueEmail(), fullname: 'Social Person' });
    const socialCode = new URL(landed).searchParams.get('socialCode')!;
    const registered = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, o.store.codename).set('User-Agent', AGENT).send({ socialCode }).expect(201);
    const userId = registered.body.user.id as string;
    // Written with the link: there before any flush.
    const rows: unknown[] = await t.app.get(DataSource).query(`SELECT 1 FROM "audit_log" WHERE "storeId" = $1 AND "action" = 'user.social.linked' AND "targetId" = $2`, [o.store.storeId, userId]);
    expect(rows).toHaveLength(1);
    const [linked] = await entries(t, o, 'user.social.linked');
    expect(linked).toMatchObject({ outcome: 'success', actor: { type: 'anonymous', id: null }, target: { type: 'user', id: userId }, details: { provider: 'google' } });
    const created = (await entries(t, o, 'user.created')).find((e) => e.target?.id === userId);
    expect(created).toMatchObject({ outcome: 'success', details: { via: 'registration' }, ip: expect.stringMatching(/\d/), userAgent: AGENT, requestId: expect.any(String) });
    expectNoSecret([linked, created!], socialCode);
  });

  it('machine.token.refused: a bad signature (no service named), then a replay (the service named)', async () => {
    const o = await ownerOfNewStore(t);
    const path = '/auth-api/validateapikey';
    const body = JSON.stringify({ apiKey: 'nothing-here' });
    const forged = await mintMachineToken({ service: 'billing', privateKey: impostor.privateKey, body, method: 'POST', path });
    await t.http.post(path).set(HEADER, o.store.codename).set('Content-Type', 'application/json').set('svc-machine-token', forged).send(body).expect(401);
    const good = await mintMachineToken({ service: 'billing', privateKey: billing.privateKey, body, method: 'POST', path });
    // Accepted (the unknown API key is the route's own answer): nothing recorded for it.
    await t.http.post(path).set(HEADER, o.store.codename).set('Content-Type', 'application/json').set('svc-machine-token', good).send(body);
    await t.http.post(path).set(HEADER, o.store.codename).set('Content-Type', 'application/json').set('svc-machine-token', good).send(body).expect(401);
    const list = (await entries(t, o, 'machine.token.refused')).sort((a, b) => a.reason!.localeCompare(b.reason!));
    expect(list.map((e) => [e.outcome, e.reason, e.actor])).toEqual([
      ['failure', 'bad_signature', { type: 'machine', id: null, roleId: null }],
      ['failure', 'replay', { type: 'machine', id: 'billing', roleId: null }],
    ]);
    expectNoSecret(list, forged, good);
  });

});

describe('audit log: email second factor', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({
      settings: {
        secondaryIdentifierPresence: 'optional',
        email2FARequiredForLogin: true,
        verification: { verificationMode: 'testMode', flows: { ...FLOWS, 'email-2factor-verification': { enabled: true } } },
      },
    });
  });
  afterAll(() => t?.close());

  it('user.2fa.failed with the reason, then user.2fa.passed', async () => {
    const store = await registerStore(t.http);
    const c = store.codename;
    const session = await login(t.http, store.ownerEmail, PASSWORD, c);
    expect(session.body.sessionNeedsEmail2FA).toBe(true);
    const flow = `${V}/email-2factor-verification`;
    const code = (await t.http.post(`${flow}/start`).set(HEADER, c).set('Authorization', `Bearer ${session.accessToken}`).send({}).expect(200)).body.secretCode as string;
    const wrong = code === '000000' ? '000001' : '000000';
    await t.http.post(`${flow}/complete`).set(HEADER, c).set('Authorization', `Bearer ${session.accessToken}`).send({ secretCode: wrong }).expect(403);
    const done = await t.http.post(`${flow}/complete`).set(HEADER, c).set('Authorization', `Bearer ${session.accessToken}`).send({ secretCode: code }).expect(200);
    // the completed sign-in's token (the pending one finished it, and serves nothing else)
    const o: Owner = { store, token: done.body.accessToken, sessionId: session.sessionId };
    const [failed] = await entries(t, o, 'user.2fa.failed');
    expect(failed).toMatchObject({ outcome: 'failure', reason: 'wrong_code', actor: { type: 'user', id: store.ownerId }, target: { type: 'session', id: session.sessionId }, details: { factor: 'email' } });
    const [passed] = await entries(t, o, 'user.2fa.passed');
    expect(passed).toMatchObject({ outcome: 'success', actor: { type: 'user', id: store.ownerId }, target: { type: 'session', id: session.sessionId }, details: { factor: 'email' } });
    expectNoSecret([failed, passed], code, wrong);
  });
});

describe('audit log: remote logins', () => {
  let t: TestApp;
  let peer: RemoteSessionPeer;
  const trusting = unique('remote');
  beforeAll(async () => {
    peer = await startRemoteSessionService();
    t = await startApp({
      settings: {
        remoteSession: remoteSessionSettings(peer, [trusting]),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await peer?.close();
  });

  it('user.remote.login: once for a remote session, not once a request; never its token or its remote id', async () => {
    const store = await registerStore(t.http, { store: { name: trusting } });
    const email = uniqueEmail();
    const created = await t.http.post('/auth-api/v1/registerstoreuser').set(HEADER, store.codename).send({ email, password: PASSWORD, fullname: 'Remote User' }).expect(201);
    const userId = created.body.user.id as string;
    const sid = unique('s');
    peer.sessions.set(sid, { id: sid, user: { email } });
    const token = await peer.sign(sid);
    for (let i = 0; i < 3; i++) await t.http.get('/auth-api/currentuser').set(HEADER, store.codename).set('Authorization', `Bearer ${token}`).expect(200);
    const owner = await login(t.http, store.ownerEmail, PASSWORD, store.codename);
    const list = await entries(t, { store, token: owner.accessToken, sessionId: owner.sessionId }, 'user.remote.login');
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ outcome: 'success', actor: { type: 'user', id: userId }, target: { type: 'session' } });
    expectNoSecret(list, token, sid);
  });
});
