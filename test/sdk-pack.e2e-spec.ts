import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { projectPath } from '../src/platform/config/project-path.js';
import { startApp, unique, type TestApp } from './helpers.js';

const run = promisify(execFile);

// The SDK packages as a team gets them: `npm pack` of each, installed into a fresh project outside
// this repository, whose TypeScript (strict, noUncheckedIndexedAccess, exactOptionalPropertyTypes)
// compiles the integration example against the tarballs' types, and whose Node runs it against the
// service: sign-up, sign-in, typed calls, refresh, a live event, sign-out.

let t: TestApp;
let project: string;
let baseUrl: string;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'svc-sdk-'));
  const tarballs: Record<string, string> = {};
  for (const name of ['client', 'nest']) {
    // prepack builds the package
    const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', project], { cwd: projectPath(`packages/${name}`) });
    tarballs[`@svc/${name}`] = `file:./${stdout.trim().split('\n').pop()}`;
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module', dependencies: { ...tarballs, '@nestjs/common': '^12.0.0', '@nestjs/core': '^12.0.0', 'reflect-metadata': '^0.2.0', rxjs: '^7.8.0' } }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: project });
  t = await startApp({ env: { SERVICE_CODENAME: unique('pack') }, settings: { accessTokenMinutes: 5 } });
  await t.app.listen(0, '127.0.0.1');
  baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
}, 180_000);

afterAll(async () => {
  await t?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the SDK tarballs in a fresh project', () => {
  it('hold their built code and types only', () => {
    const installed = readdirSync(join(project, 'node_modules/@svc/client/dist'));
    expect(installed).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'client.d.ts', 'events.d.ts']));
    expect(readdirSync(join(project, 'node_modules/@svc/client')).sort()).toEqual(['dist', 'package.json']);
  });

  it('type-check a strict consumer and run sign-in → refresh → live event → sign-out against the service', async () => {
    copyFileSync(projectPath('examples/node/integration.ts'), join(project, 'integration.ts'));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'ES2022',
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          typeRoots: [projectPath('node_modules/@types')],
          types: ['node'],
          lib: ['ES2023', 'DOM'],
        },
        files: ['integration.ts'],
      }),
    );
    await run(process.execPath, [projectPath('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: project });
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `import { integration } from './integration.js'; const r = await integration(${JSON.stringify(baseUrl)}, () => {}); console.log(JSON.stringify({ events: r.events.length, refreshed: r.refreshed, signedOut: r.signedOut }));`], { cwd: project });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ events: 1, refreshed: true, signedOut: true });
  }, 60_000);

  it('load @svc/nest with its NestJS peers', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', "import 'reflect-metadata'; const m = await import('@svc/nest'); console.log(typeof m.SvcAuthModule.forRoot, typeof m.svcAuthMiddleware);"], { cwd: project });
    expect(stdout.trim()).toBe('function function');
  });
});
