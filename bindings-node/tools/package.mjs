// Packs the npm tarballs into target/dist/node, in napi's per-platform layout:
//   a2a-native-<version>.tgz                   the JavaScript API and its declarations, with an
//                                              optional dependency on every platform package
//   a2a-native-linux-x64-gnu-<version>.tgz     this machine's native module (npm/<suffix>/package.json
//                                              declares its os, cpu and libc, so npm installs only
//                                              the one that matches)
// Run after `npm run build` (dev profile, what test.sh smoke-tests) or `npm run build:release`.
// The source tree's package.json lists no optional dependencies: npm would fetch them from the
// registry into every checkout. They are added to the packed copy only, as `napi pre-publish` does.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const out = join(here, '..', 'target', 'dist', 'node');
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const pkg = readJson(join(here, 'package.json'));

// napi's platform suffix of each target triple this package declares.
const suffixOf = (triple) => {
  const [arch, , os, abi] = triple.split('-');
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[arch] ?? arch;
  const system = { windows: 'win32' }[os] ?? os;
  return abi ? `${system}-${cpu}-${abi}` : `${system}-${cpu}`;
};
const platforms = pkg.napi.targets.map(suffixOf);

rmSync(out, { recursive: true, force: true });
const stage = join(out, 'stage');
const pack = (dir) => execFileSync('npm', ['pack', '--quiet', '--pack-destination', out], { cwd: dir, encoding: 'utf8' }).trim();
const packed = [];

// The platform packages whose native module was built here.
for (const suffix of platforms) {
  const binary = `${pkg.napi.binaryName}.${suffix}.node`;
  if (!existsSync(join(here, binary))) continue;
  const meta = readJson(join(here, 'npm', suffix, 'package.json'));
  if (meta.version !== pkg.version) throw new Error(`npm/${suffix}/package.json is version ${meta.version}, not ${pkg.version}`);
  const dir = join(stage, suffix);
  mkdirSync(dir, { recursive: true });
  for (const file of ['package.json', 'README.md']) cpSync(join(here, 'npm', suffix, file), join(dir, file));
  cpSync(join(here, binary), join(dir, binary));
  packed.push(pack(dir));
}
if (packed.length === 0) throw new Error('no native module to pack: run `npm run build` first');

// The main package: the files its package.json lists, with the optional dependencies added.
const main = join(stage, 'main');
mkdirSync(main, { recursive: true });
for (const file of [...pkg.files, 'README.md']) cpSync(join(here, file), join(main, file), { recursive: true });
const { devDependencies, scripts, ...published } = pkg;
published.optionalDependencies = Object.fromEntries(platforms.map((s) => [`${pkg.name}-${s}`, pkg.version]));
writeFileSync(join(main, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
packed.unshift(pack(main));

rmSync(stage, { recursive: true, force: true });
console.log(`${out}: ${packed.join(' ')}`);
