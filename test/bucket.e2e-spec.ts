import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { login, PASSWORD, registerStore, startApp, type Login, type RegisteredStore, type TestApp } from './helpers.js';

const HEADER = 'svc-store-codename';
const UPLOAD = '/auth-api/bucket/userAvatars/upload';
const DOWNLOAD = '/auth-api/bucket/userAvatars/download/key';

// Small real images. The PNG, GIF and WebP are complete 1×1 images; the JPEG is a JFIF header
// (SOI, APP0 "JFIF", EOI) — enough for the content check, which reads the magic bytes only.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');
const GIF = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from('01000100800000ffffff0000002c00000000010001000002024401003b', 'hex')]);
const WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><script>alert(document.cookie)</script></svg>');
const HTML = Buffer.from('<!doctype html><html><body><script>alert(document.cookie)</script></body></html>');

// A file that starts like a PNG and is padded to `size` bytes.
function pngOfSize(size: number): Buffer {
  return Buffer.concat([PNG, Buffer.alloc(size - PNG.length, 0)]);
}

// Collects any response body as raw bytes, whatever its Content-Type.
function binary(res: Response, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

function bearer(token: string): string {
  return `Bearer ${token}`;
}

interface Uploader extends RegisteredStore {
  session: Login;
}

async function uploader(t: TestApp): Promise<Uploader> {
  const store = await registerStore(t.http);
  return { ...store, session: await login(t.http, store.ownerEmail, PASSWORD, store.codename) };
}

function upload(t: TestApp, who: Uploader, data: Buffer, filename = 'avatar.png', contentType?: string, token = who.session.accessToken) {
  return t.http
    .post(UPLOAD)
    .set(HEADER, who.codename)
    .set('Authorization', bearer(token))
    .attach('file', data, contentType ? { filename, contentType } : { filename });
}

function download(t: TestApp, accessKey: string) {
  return t.http.get(`${DOWNLOAD}/${accessKey}`).buffer(true).parse(binary);
}

function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'svc-bucket-'));
}

describe('avatar bucket (in-memory storage)', () => {
  let t: TestApp;
  let who: Uploader;
  beforeAll(async () => {
    // ':memory:' keeps uploads out of the repository's ./data.
    t = await startApp({ env: { DATA_DIR: ':memory:' } });
    who = await uploader(t);
  });
  afterAll(() => t.close());

  describe('upload', () => {
    it('takes an image with the access token: 201 with accessKey and the download url', async () => {
      const res = await upload(t, who, PNG).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['accessKey', 'status', 'url']);
      expect(res.body.status).toBe('OK');
      expect(res.body.accessKey).toMatch(/^[0-9a-f]{40}$/);
      // Absolute, from the address the request was sent to (no PUBLIC_URL here).
      expect(res.body.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+${DOWNLOAD}/${res.body.accessKey}$`));
      const got = await download(t, res.body.accessKey).expect(200);
      expect(Buffer.compare(got.body as Buffer, PNG)).toBe(0);
    });

    it('gives every upload its own access key, even for the same bytes', async () => {
      const [a, b] = [await upload(t, who, PNG).expect(201), await upload(t, who, PNG).expect(201)];
      expect(a.body.accessKey).not.toBe(b.body.accessKey);
    });

    it("takes the login's userBucketToken", async () => {
      const res = await upload(t, who, PNG, 'avatar.png', undefined, who.session.userBucketToken).expect(201);
      expect(res.body.accessKey).toMatch(/^[0-9a-f]{40}$/);
    });

    it('needs a token: 401', async () => {
      const res = await t.http.post(UPLOAD).set(HEADER, who.codename).attach('file', PNG, 'avatar.png').expect(401);
      expect(res.body).toMatchObject({ result: 'ERR', status: 401, errCode: 'Unauthorized' });
      const garbage = await upload(t, who, PNG, 'avatar.png', undefined, 'not.a.token').expect(401);
      expect(garbage.body.result).toBe('ERR');
    });

    it('refuses a token of another store: 403 TenantMismatch', async () => {
      const other = await uploader(t);
      const res = await t.http
        .post(UPLOAD)
        .set(HEADER, who.codename)
        .set('Authorization', bearer(other.session.accessToken))
        .attach('file', PNG, 'avatar.png')
        .expect(403);
      expect(res.body.errCode).toBe('TenantMismatch');
    });

    // A multipart body names its store as a JSON one does: a `_store` field counts when no header
    // or query names one, and an API key of another store is refused.
    describe('a store named by a multipart _store field', () => {
      let key: string;
      beforeAll(async () => {
        const res = await t.http.post('/auth-api/v1/apikeys').set(HEADER, who.codename).set('Authorization', bearer(who.session.accessToken)).send({ name: 'uploads' }).expect(201);
        key = res.body.apiKey.key;
      });
      const withKey = (fields: Record<string, string>) => {
        const req = t.http.post(UPLOAD).set('Authorization', bearer(key));
        for (const [name, value] of Object.entries(fields)) req.field(name, value);
        return req.attach('file', PNG, 'avatar.png');
      };

      it("an API key with another store's codename: 403 TenantMismatch, nothing stored", async () => {
        const other = await registerStore(t.http);
        const res = await withKey({ _store: other.codename }).expect(403);
        expect(res.body).toMatchObject({ result: 'ERR', errCode: 'TenantMismatch' });
        expect(res.body.accessKey).toBeUndefined();
      });

      it('an unknown codename: StoreNotFound, as in a JSON body', async () => {
        const json = await t.http.post('/auth-api/v1/apikeys').set('Authorization', bearer(key)).send({ _store: 'no-such-store-here', name: 'x' });
        const multipart = await withKey({ _store: 'no-such-store-here' });
        expect(json.body.errCode).toBe('StoreNotFound');
        expect([multipart.status, multipart.body.errCode]).toEqual([json.status, 'StoreNotFound']);
      });

      it("the key's own store: 201", async () => {
        expect((await withKey({ _store: who.codename }).expect(201)).body.accessKey).toMatch(/^[0-9a-f]{40}$/);
      });

      it('the header decides over the field, as for JSON', async () => {
        const other = await registerStore(t.http);
        await upload(t, who, PNG).field('_store', other.codename).expect(201);
      });
    });

    it('does not accept the userBucketToken anywhere else: 401', async () => {
      const token = who.session.userBucketToken;
      expect(token).toEqual(expect.any(String));
      expect(token).not.toBe(who.session.accessToken);
      const current = await t.http.get('/auth-api/currentuser').set(HEADER, who.codename).set('Authorization', bearer(token)).expect(401);
      expect(current.body).toEqual({ status: 'ERR', message: 'No login found' });
      await t.http.get('/auth-api/v1/users').set(HEADER, who.codename).set('Authorization', bearer(token)).expect(401);
      await t.http.get(`/auth-api/v1/users/${who.ownerId}`).set(HEADER, who.codename).set('Authorization', bearer(token)).expect(401);
      await t.http.get('/auth-api/sessions').set(HEADER, who.codename).set('Authorization', bearer(token)).expect(401);
      // the access token works on the same routes
      await t.http.get('/auth-api/currentuser').set(HEADER, who.codename).set('Authorization', bearer(who.session.accessToken)).expect(200);
    });

    it('stops taking the userBucketToken once its session has ended', async () => {
      const mine = await uploader(t);
      await upload(t, mine, PNG, 'a.png', undefined, mine.session.userBucketToken).expect(201);
      await t.http.post('/auth-api/logout').set(HEADER, mine.codename).set('Authorization', bearer(mine.session.accessToken)).expect(200);
      await upload(t, mine, PNG, 'a.png', undefined, mine.session.userBucketToken).expect(401);
      await upload(t, mine, PNG, 'a.png', undefined, mine.session.accessToken).expect(401);
    });
  });

  describe('content type from the content', () => {
    it.each([
      ['PNG', PNG, 'image/png'],
      ['JPEG', JPEG, 'image/jpeg'],
      ['GIF', GIF, 'image/gif'],
      ['WebP', WEBP, 'image/webp'],
    ])('accepts a %s and serves it as its type', async (_name, data, mime) => {
      const res = await upload(t, who, data, 'upload.bin', 'application/octet-stream').expect(201);
      const got = await download(t, res.body.accessKey).expect(200);
      expect(got.headers['content-type']).toBe(mime);
      expect(Buffer.compare(got.body as Buffer, data)).toBe(0);
    });

    it('stores a PNG named x.txt and declared text/plain as image/png', async () => {
      const res = await upload(t, who, PNG, 'x.txt', 'text/plain').expect(201);
      const got = await download(t, res.body.accessKey).expect(200);
      expect(got.headers['content-type']).toBe('image/png');
    });

    it.each([
      ['SVG', SVG],
      ['HTML', HTML],
      ['plain text', Buffer.from('just some text, not an image at all')],
      ['PDF', Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n', 'latin1')],
    ])('refuses %s named a.png and declared image/png: 415 UnsupportedMediaType', async (_name, data) => {
      const res = await upload(t, who, data, 'a.png', 'image/png').expect(415);
      expect(res.body).toMatchObject({ result: 'ERR', status: 415, errCode: 'UnsupportedMediaType' });
      expect(typeof res.body.requestId).toBe('string');
      expect(res.body.accessKey).toBeUndefined();
    });

    it('refuses an empty file or a missing file field: 400 FileRequired', async () => {
      const empty = await upload(t, who, Buffer.alloc(0)).expect(400);
      expect(empty.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'FileRequired' });
      const noFile = await t.http
        .post(UPLOAD)
        .set(HEADER, who.codename)
        .set('Authorization', bearer(who.session.accessToken))
        .field('note', 'no file here')
        .expect(400);
      expect(noFile.body).toMatchObject({ result: 'ERR', status: 400, errCode: 'FileRequired' });
      const noBody = await t.http.post(UPLOAD).set(HEADER, who.codename).set('Authorization', bearer(who.session.accessToken)).expect(400);
      expect(noBody.body.errCode).toBe('FileRequired');
    });

    it('refuses the file under another field name: 400', async () => {
      const res = await t.http
        .post(UPLOAD)
        .set(HEADER, who.codename)
        .set('Authorization', bearer(who.session.accessToken))
        .attach('avatar', PNG, 'a.png')
        .expect(400);
      expect(res.body).toMatchObject({ result: 'ERR', status: 400 });
    });
  });

  describe('download', () => {
    it('is public and serves the stored bytes with safe headers', async () => {
      const res = await upload(t, who, GIF, 'anim.png', 'image/png').expect(201);
      const got = await t.http.get(new URL(res.body.url).pathname).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(got.body as Buffer, GIF)).toBe(0);
      expect(got.headers['content-type']).toBe('image/gif');
      expect(got.headers['content-length']).toBe(String(GIF.length));
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.headers['cache-control']).toMatch(/max-age=\d+/);
      expect(got.headers['set-cookie']).toBeUndefined();
    });

    it('answers 404 FileNotFound for an unknown key', async () => {
      const res = await t.http.get(`${DOWNLOAD}/${'0'.repeat(40)}`).expect(404);
      expect(res.body).toMatchObject({ result: 'ERR', status: 404, errCode: 'FileNotFound' });
      const junk = await t.http.get(`${DOWNLOAD}/whatever`).expect(404);
      expect(junk.body.errCode).toBe('FileNotFound');
    });

    it('answers 404 for keys that look like paths', async () => {
      for (const key of ['..%2F..%2Fetc%2Fpasswd', '..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd', '../x', '..%5C..%5Cwindows', '%2Fetc%2Fpasswd']) {
        const res = await t.http.get(`${DOWNLOAD}/${key}`).buffer(true).parse(binary).expect(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body.toString()).not.toMatch(/root:/);
      }
    });
  });
});

describe('avatar bucket on local disk under DATA_DIR', () => {
  let t: TestApp;
  let who: Uploader;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = tempDataDir();
    t = await startApp({ env: { DATA_DIR: dataDir } });
    who = await uploader(t);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the file at <DATA_DIR>/bucket/userAvatars/<accessKey>', async () => {
    const res = await upload(t, who, WEBP, 'face.webp').expect(201);
    const path = join(dataDir, 'bucket', 'userAvatars', res.body.accessKey);
    expect(existsSync(path)).toBe(true);
    expect(Buffer.compare(readFileSync(path), WEBP)).toBe(0);
    const got = await download(t, res.body.accessKey).expect(200);
    expect(Buffer.compare(got.body as Buffer, WEBP)).toBe(0);
    expect(got.headers['content-type']).toBe('image/webp');
  });

  it('beyond avatarUploadsPerUser (5) the oldest file and its type record leave the disk', async () => {
    const someone = await uploader(t);
    const keys: string[] = [];
    for (let i = 0; i < 6; i++) keys.push((await upload(t, someone, PNG).expect(201)).body.accessKey);
    const dir = join(dataDir, 'bucket', 'userAvatars');
    expect(readdirSync(dir).filter((f) => f.startsWith(keys[0]))).toEqual([]);
    for (const key of keys.slice(1)) expect(existsSync(join(dir, key))).toBe(true);
    await download(t, keys[0]).expect(404);
  });

  it('writes nothing for a refused upload', async () => {
    const dir = join(dataDir, 'bucket', 'userAvatars');
    await upload(t, who, PNG).expect(201); // the folder exists from here on
    const before = readdirSync(dir).sort();
    await upload(t, who, SVG, 'a.png', 'image/png').expect(415);
    await upload(t, who, Buffer.alloc(0)).expect(400);
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('never serves a file from outside the bucket folder', async () => {
    // A readable file one level above the bucket folder, as a traversal would reach it.
    const outside = join(dataDir, 'bucket');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'secret'), 'top secret');
    writeFileSync(join(outside, 'secret.type'), 'text/plain');
    writeFileSync(join(dataDir, 'secret'), 'top secret');
    writeFileSync(join(dataDir, 'secret.type'), 'text/plain');
    for (const key of ['..%2Fsecret', '..%2F..%2Fsecret', '..%5Csecret', encodeURIComponent(join(outside, 'secret'))]) {
      const res = await t.http.get(`${DOWNLOAD}/${key}`).buffer(true).parse(binary).expect(404);
      expect(res.body.toString()).not.toContain('top secret');
    }
  });
});

describe('avatar bucket with PUBLIC_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { DATA_DIR: ':memory:', PUBLIC_URL: 'https://auth.example.test' } });
  });
  afterAll(() => t.close());

  it('returns an absolute download url', async () => {
    const who = await uploader(t);
    const res = await upload(t, who, PNG).expect(201);
    expect(res.body.url).toBe(`https://auth.example.test${DOWNLOAD}/${res.body.accessKey}`);
    const path = new URL(res.body.url).pathname;
    const got = await t.http.get(path).buffer(true).parse(binary).expect(200);
    expect(Buffer.compare(got.body as Buffer, PNG)).toBe(0);
  });
});

describe('avatar bucket with avatarMaxBytes 2048', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ env: { DATA_DIR: ':memory:' }, settings: { avatarMaxBytes: 2048 } });
  });
  afterAll(() => t.close());

  it('refuses a larger file: 413 PayloadTooLarge in the error shape', async () => {
    const who = await uploader(t);
    const res = await upload(t, who, pngOfSize(3000)).expect(413);
    expect(res.body).toMatchObject({ result: 'ERR', status: 413, errCode: 'PayloadTooLarge' });
    expect(typeof res.body.requestId).toBe('string');
  });

  it('accepts a file of exactly the limit', async () => {
    const who = await uploader(t);
    const data = pngOfSize(2048);
    const res = await upload(t, who, data).expect(201);
    const got = await download(t, res.body.accessKey).expect(200);
    expect((got.body as Buffer).length).toBe(2048);
  });
});
