// Checks the architecture's one-way rules from the imports: cores (config, cluster, partition, data, wan, persistence, the service rooms,
// the router, path and request-parser code, and the admin CLI's core: src/admin/ but its HTTP client) never import node:net/node:fs/node:http or the runtime, and never call
// Date.now, Math.random or setTimeout; nothing but member.ts imports runtime/; util/ imports only util/;
// config/ never imports wan/;
// no index.ts barrels;
// util, config, cluster, partition and data never import wan/ (dependencies point one way);
// package.json has no runtime dependencies.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../harness/member-process.js';
import { sourceFiles as files } from '../harness/source-files.js';

const SRC = path.join(REPO_ROOT, 'src');
const CORES = ['config', 'cluster', 'partition', 'data', 'replication', 'invocation', 'wan', 'persistence', 'operations', 'lifecycle', 'recovery', 'merge', 'cp'].map((d) => path.join(SRC, d));
/** The admin CLI's I/O edge: the one file of src/admin/ allowed node:http / node:https and a timer. */
const ADMIN_EDGE = path.join(SRC, 'admin', 'http-client.ts');
const ADMIN_CORE = files(path.join(SRC, 'admin')).filter((f) => f !== ADMIN_EDGE);
const CORE_FILES = [...CORES.flatMap((d) => (fs.existsSync(d) ? files(d) : [])), path.join(SRC, 'http', 'router.ts'), path.join(SRC, 'http', 'path.ts'), path.join(SRC, 'http', 'parser.ts'), ...ADMIN_CORE];

test('the admin core is checked as a core, and its edge exists', () => {
  assert.ok(ADMIN_CORE.some((f) => f.endsWith(path.join('admin', 'run.ts'))), 'src/admin/run.ts is among the cores');
  assert.ok(fs.existsSync(ADMIN_EDGE));
});

test('cores do no I/O and read no clock or randomness directly', () => {
  for (const file of CORE_FILES) {
    const text = fs.readFileSync(file, 'utf8');
    const rel = path.relative(REPO_ROOT, file);
    assert.doesNotMatch(text, /from 'node:(net|fs|http|https|tls|dgram|child_process)'/, `${rel} imports I/O`);
    assert.doesNotMatch(text, /from '\.\.\/(\.\.\/)?runtime\//, `${rel} imports runtime/`);
    const code = text.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(code, /\bDate\.now\(|\bMath\.random\(|(?<![.\w])setTimeout\(|(?<![.\w])setInterval\(/, `${rel} reads the clock, randomness or sets timers`);
  }
});

test('only member.ts and runtime/ import runtime/; no barrels', () => {
  for (const file of files(SRC)) {
    const rel = path.relative(SRC, file);
    assert.notEqual(path.basename(file), 'index.ts', `${rel} is a barrel`);
    if (rel === 'member.ts' || rel.startsWith('runtime' + path.sep)) continue;
    const text = fs.readFileSync(file, 'utf8');
    const importsRuntime = /from '(\.\.\/)+runtime\//.test(text);
    assert.equal(importsRuntime, false, `${rel} imports runtime/`);
  }
});

test('config/ never imports wan/ (the WAN room builds on the configuration, not the other way round)', () => {
  for (const file of files(path.join(SRC, 'config'))) {
    const text = fs.readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /from '\.\.\/wan\//, `${path.relative(REPO_ROOT, file)} imports wan/`);
  }
});

test('package.json has no runtime dependencies', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), []);
});

test('util/ depends on nothing else of the member', () => {
  for (const file of files(path.join(SRC, 'util'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/from '(\.[^']*)'/g)) {
      assert.match(m[1] as string, /^\.\/[^/]+$/, `${path.relative(REPO_ROOT, file)} imports ${m[1]}`);
    }
  }
});

test('the rooms below wan/ (util, config, cluster, partition, data) never import wan/', () => {
  for (const dir of ['util', 'config', 'cluster', 'partition', 'data']) {
    for (const file of files(path.join(SRC, dir))) {
      const text = fs.readFileSync(file, 'utf8');
      assert.doesNotMatch(text, /from '(\.\.\/)+wan\//, `${path.relative(SRC, file)} imports wan/`);
    }
  }
});
