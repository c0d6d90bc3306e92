import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, HttpStatus, Module } from '@nestjs/common';
import { defineErrors, defineExtension, Public } from '../src/extension.js';
import { loadExtensions } from '../src/extensions.js';
import { PolicyAudit } from '../src/kernel/policy-audit.js';
import { projectPath } from '../src/platform/config/project-path.js';
import supportTickets from '../examples/support-tickets/index.js';
import { startApp } from './helpers.js';

// How the service takes extensions in: their definitions checked at boot (a problem names the
// extension), SERVICE_EXTENSIONS, the built service serving an example, and the packed package
// installed in another project.

@Controller('probe-api')
class UnguardedController {
  @Get('open')
  open() {
    return { ok: true };
  }
}
@Module({ controllers: [UnguardedController] })
class UnguardedModule {}

@Controller('probe-api')
class GuardedController {
  @Get('hello')
  @Public()
  hello() {
    return { hello: 'world' };
  }
}
@Module({ controllers: [GuardedController] })
class GuardedModule {}

describe('extension definitions, checked at boot', () => {
  it.each([
    ['a bad name', defineExtension({ name: 'Bad Name' }), /extension "Bad Name": name must be lower-case letters, digits and dashes/],
    ['a name loaded twice', [defineExtension({ name: 'twice' }), defineExtension({ name: 'twice' })], /extension "twice" is loaded twice/],
    ['an error code of the service', defineExtension({ name: 'clash', errors: defineErrors('probe.ts', { NotFound: { status: HttpStatus.NOT_FOUND, message: 'errMsg_NotFound', description: 'x' } }) }), /extension "clash": errCode NotFound is declared twice/],
    ['an audit action of the service', defineExtension({ name: 'audit-clash', auditActions: { 'user.created': 'again' } }), /extension "audit-clash": audit action "user.created" is declared twice/],
    ['an audit action that is not dotted', defineExtension({ name: 'audit-shape', auditActions: { Opened: 'x' } }), /audit action "Opened" must be dotted words/],
    ['a migration without a timestamp', defineExtension({ name: 'migration', migrations: [class CreateThings {}] }), /extension "migration": migration CreateThings must be a class whose name ends with a 13-digit timestamp/],
    ['a settings section of the service', defineExtension({ name: 'section', settings: { key: 'paging', schema: class {} } }), /settings: section "paging" of an extension is one of the service's own keys/],
    ['a permission of the service', defineExtension({ name: 'perm', permissions: [{ groupName: 'mine', permissions: ['users.read'] }] }), /permission "users\.read" is listed twice/],
    ['a bad data object', defineExtension({ name: 'objects', dataObjects: [{ name: 'no spaces', accessLevel: 'accessPublic' }] }), /extension "objects": dataObjects\[0\]\.name: name must be a data object name/],
  ])('stop the boot on %s, naming the extension', async (_what, extensions, message) => {
    await expect(startApp({ extensions: [extensions].flat() })).rejects.toThrow(message);
  });

  it('stop the boot on an extension route without a policy decorator, as on ours', async () => {
    await expect(startApp({ extensions: [defineExtension({ name: 'unguarded', modules: [UnguardedModule] })] })).rejects.toThrow(/Routes without a policy decorator[\s\S]*GET \/probe-api\/open/);
  });

  it('list extension routes with their policy beside ours (the route-policy review)', async () => {
    const t = await startApp({ extensions: [supportTickets, defineExtension({ name: 'probe', modules: [GuardedModule] })] });
    try {
      const routes = t.app.get(PolicyAudit).routes();
      expect(routes).toEqual(expect.arrayContaining([
        { method: 'GET', path: '/probe-api/hello', policy: 'public' },
        { method: 'POST', path: '/tickets-api/v1/tickets/:id/close', policy: expect.stringContaining('permission=tickets.close') },
      ]));
      await t.http.get('/probe-api/hello').expect(200, { hello: 'world' });
    } finally {
      await t.close();
    }
  });
});

describe('SERVICE_EXTENSIONS', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-ext-'));
    writeFileSync(join(dir, 'not-one.mjs'), 'export default { name: "plain object" };\n');
    writeFileSync(join(dir, 'broken.mjs'), 'export default ;\n');
    mkdirSync(join(dir, 'node_modules', 'probe-ext'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', 'probe-ext', 'package.json'), JSON.stringify({ name: 'probe-ext', type: 'module', exports: { '.': { import: './main.mjs' } } }));
    // An extension by its package name: what defineExtension returns, without the service's code.
    writeFileSync(join(dir, 'node_modules', 'probe-ext', 'main.mjs'), 'export const extension = { name: "probe-ext", kind: "svc.extension" };\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('load packages by name and files by path, from the working directory', async () => {
    const loaded = await loadExtensions('probe-ext', dir);
    expect(loaded.map((e) => e.name)).toEqual(['probe-ext']);
  });

  it.each([
    ['./missing.mjs', /SERVICE_EXTENSIONS: "\.\/missing\.mjs" cannot be found: .*missing\.mjs does not exist/],
    ['no-such-package', /SERVICE_EXTENSIONS: "no-such-package" cannot be found: no package "no-such-package" in node_modules/],
    ['./broken.mjs', /SERVICE_EXTENSIONS: "\.\/broken\.mjs" cannot be loaded/],
    ['./not-one.mjs', /SERVICE_EXTENSIONS: "\.\/not-one\.mjs" .* exports no extension: export the result of defineExtension/],
  ])('stop the boot when %s cannot be used, naming it', async (entry, message) => {
    await expect(loadExtensions(entry, dir)).rejects.toThrow(message);
  });
});

// The built service (`npm start` runs dist/): needs `npm run build`, which .ci/run does first.
const BUILT = existsSync(projectPath('dist', 'src', 'main.js')) && existsSync(projectPath('dist', 'examples', 'support-tickets', 'index.js'));
const describeBuilt = BUILT ? describe : describe.skip;
const built = BUILT ? '' : ' (skipped: needs npm run build)';

async function startProcess(args: string[], cwd: string, env: Record<string, string>): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const forwarded = Object.fromEntries(['DATABASE_URL', 'REDIS_URL'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!]));
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH!, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATA_DIR: ':memory:', LOG_LEVEL: 'warn', ...forwarded, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found) resolve(found[1]);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', () => reject(new Error(`stopped before listening:\n${output}`)));
  });
  return { child, url };
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describeBuilt(`the built service with SERVICE_EXTENSIONS${built}`, () => {
  it('serves the example extension behind the service guard', async () => {
    const { child, url } = await startProcess(['dist/src/main.js'], projectPath(), { SERVICE_EXTENSIONS: './examples/support-tickets' });
    try {
      const refused = await fetch(`${url}/tickets-api/v1/tickets`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ errCode: 'Unauthorized' });
      const doc = (await (await fetch(`${url}/docs-json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toContain('/tickets-api/v1/store-tickets');
    } finally {
      await stop(child);
    }
  }, 120_000);

  it('stops the boot with the extension named when it cannot be loaded', () => {
    const run = spawnSync(process.execPath, ['dist/src/main.js'], { cwd: projectPath(), env: { PATH: process.env.PATH!, NODE_ENV: 'test', SERVICE_EXTENSIONS: './examples/nothing-here' }, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('SERVICE_EXTENSIONS: "./examples/nothing-here" cannot be found');
  }, 300_000);
});

// `npm pack`: the tarball another team installs. Installed here into a fresh project whose other
// dependencies are this checkout's (linked, so nothing is downloaded), with an extension written
// in TypeScript against the packed types, then started with bootstrap({ extensions }).
describeBuilt(`the packed package in another project${built}`, () => {
  let project: string;
  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'svc-packed-'));
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('installs, type-checks an extension against its types, and serves it', async () => {
    const packed = spawnSync('npm', ['pack', '--silent', '--pack-destination', project], { cwd: projectPath(), encoding: 'utf8' });
    expect(packed.status).toBe(0);
    const tarball = join(project, packed.stdout.trim().split('\n').pop()!);
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, 'svc-auth'), { recursive: true });
    expect(spawnSync('tar', ['-xzf', tarball, '-C', join(modules, 'svc-auth'), '--strip-components=1']).status).toBe(0);
    for (const name of readdirSync(projectPath('node_modules'))) {
      if (name !== '.bin' && name !== 'svc-auth' && !name.startsWith('.')) symlinkSync(projectPath('node_modules', name), join(modules, name));
    }
    expect(readdirSync(join(modules, 'svc-auth', 'dist', 'src')).filter((f) => f.startsWith('extension.'))).toEqual(expect.arrayContaining(['extension.js', 'extension.d.ts']));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'their-service', private: true, type: 'module' }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2023', strict: true, experimentalDecorators: true, emitDecoratorMetadata: true, skipLibCheck: true, outDir: 'dist', types: ['node'] }, include: ['ext.ts'] }),
    );
    writeFileSync(
      join(project, 'ext.ts'),
      [
        "import { Controller, Get, Module } from '@nestjs/common';",
        "import { Authenticated, Ctx, defineExtension, Public, USER_ONLY, type RequestContext } from 'svc-auth/extension';",
        "@Controller('hello-api')",
        'class HelloController {',
        "  @Get('open') @Public() open() { return { hello: 'world' }; }",
        "  @Get('me') @Authenticated({ principals: USER_ONLY, permission: null }) me(@Ctx() ctx: RequestContext) { return { userId: ctx.session!.userId }; }",
        '}',
        '@Module({ controllers: [HelloController] })',
        'class HelloModule {}',
        "export default defineExtension({ name: 'hello', modules: [HelloModule] });",
      ].join('\n'),
    );
    const compiled = spawnSync(process.execPath, [projectPath('node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, encoding: 'utf8' });
    expect(compiled.stdout + compiled.stderr).toBe('');
    writeFileSync(
      join(project, 'server.mjs'),
      [
        "import { bootstrap } from 'svc-auth';",
        "import hello from './dist/ext.js';",
        'await bootstrap({ extensions: [hello] });',
      ].join('\n'),
    );
    const { child, url } = await startProcess(['server.mjs'], project, {});
    try {
      expect(await (await fetch(`${url}/hello-api/open`)).json()).toEqual({ hello: 'world' });
      const refused = await fetch(`${url}/hello-api/me`);
      expect(refused.status).toBe(401);
      // started as `npm start` starts the service: a SIGTERM stops it gracefully
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await stop(child);
    }
  }, 300_000);
});
