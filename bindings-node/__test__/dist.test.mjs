// The npm tarballs tools/package.mjs packs (target/dist/node), installed as a user installs them:
// into a fresh project, from the tarballs alone (no registry, an empty cache), then an agent and a
// client in ES module and CommonJS form and a strict TypeScript compile of a consumer file.
// test.sh packs them first and sets A2A_REQUIRE_DIST, so missing tarballs fail there; a bare
// `node --test` skips.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(here, '..', 'target', 'dist', 'node');
const tarballs = existsSync(dist) ? readdirSync(dist).filter((f) => f.endsWith('.tgz')) : [];
const main = tarballs.find((f) => /^a2a-native-\d/.test(f));
const platform = tarballs.find((f) => f.startsWith('a2a-native-linux-x64-gnu-'));
const missing = !main || !platform;
if (missing && process.env.A2A_REQUIRE_DIST) {
  throw new Error(`no npm tarballs in ${dist}: run node tools/package.mjs`);
}
const skip = missing ? `no npm tarballs in ${dist} (tools/package.mjs packs them)` : false;

let project;
before(() => {
  if (skip) return;
  project = mkdtempSync(join(tmpdir(), 'a2a-npm-consumer-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  // An unreachable registry and an empty cache: the two tarballs must be all it takes.
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error',
    '--registry=http://127.0.0.1:9/', `--cache=${join(project, '.npm-cache')}`,
    join(dist, main), join(dist, platform)], { cwd: project, stdio: ['ignore', 'inherit', 'inherit'] });
});
after(() => project && rmSync(project, { recursive: true, force: true }));

const run = (file) => {
  copyFileSync(join(here, 'smoke', file), join(project, file));
  return execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000 }).trim();
};

test('the packages install in napi\'s layout: JavaScript in one, the native module in the platform one', { skip }, () => {
  const modules = join(project, 'node_modules');
  assert.deepEqual(readdirSync(join(modules, 'a2a-native')).filter((f) => f.endsWith('.node')), []);
  assert.ok(existsSync(join(modules, 'a2a-native-linux-x64-gnu', 'a2a-native.linux-x64-gnu.node')));
  const meta = JSON.parse(readFileSync(join(modules, 'a2a-native', 'package.json'), 'utf8'));
  assert.deepEqual(Object.keys(meta.optionalDependencies), ['a2a-native-linux-x64-gnu']);
  assert.equal(meta.devDependencies, undefined);
  const native = JSON.parse(readFileSync(join(modules, 'a2a-native-linux-x64-gnu', 'package.json'), 'utf8'));
  assert.deepEqual([native.os, native.cpu, native.libc], [['linux'], ['x64'], ['glibc']]);
});

test('an ES module runs an agent and a client from the installed packages', { skip }, () => {
  assert.equal(run('agent.mjs'), `smoke ok (esm): ${join(project, 'node_modules', 'a2a-native-linux-x64-gnu', 'a2a-native.linux-x64-gnu.node')}`);
});

test('a CommonJS module runs an agent and a client from the installed packages', { skip }, () => {
  assert.equal(run('agent.cjs'), `smoke ok (cjs): ${join(project, 'node_modules', 'a2a-native-linux-x64-gnu', 'a2a-native.linux-x64-gnu.node')}`);
});

test('a TypeScript consumer compiles against the installed declarations (strict, NodeNext)', { skip }, () => {
  copyFileSync(join(here, 'smoke', 'consumer.ts'), join(project, 'consumer.ts'));
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext',
      lib: ['ES2023', 'esnext.disposable'], skipLibCheck: false,
      // The consumer's own @types/node would come from the registry; this suite's copy stands in.
      types: ['node'], typeRoots: [join(here, 'node_modules', '@types')],
    },
    files: ['consumer.ts'],
  }));
  const tsc = join(here, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, stdio: ['ignore', 'inherit', 'inherit'] });
  // And a type error in the same file is caught (the compile above proves something).
  writeFileSync(join(project, 'consumer.ts'), `${readFileSync(join(project, 'consumer.ts'), 'utf8')}\nexport const wrong: number = new AgentServer({} as never, echo).url;\n`);
  assert.throws(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, stdio: 'pipe' }));
});
