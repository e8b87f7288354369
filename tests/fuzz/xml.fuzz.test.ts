// Seeded fuzzing of src/config/xml.ts. Thousands of inputs: mutations of valid configuration
// documents, soups of XML fragments (entities, DOCTYPE, CDATA, PIs, quotes), deeply nested
// documents, and huge ones near and over the size limit. Checks: parseXml returns an element or
// throws an XmlParseError with a sane line:column, never anything else; each case finishes within a
// time budget proportional to its size (no hang, no catastrophic backtracking); and random valid
// trees survive serialize → parse unchanged. The whole loader gets the same mutated documents and
// must always answer with a Config or an exit-2 message, never throw. The seed comes from FUZZ_SEED (default fixed) and is
// printed on failure; rerun with FUZZ_SEED=<n> to replay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseXml, XmlParseError, type XmlElement } from '../../src/config/xml.js';
import { loadConfig } from '../../src/config/load.js';
import { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';

const FUZZ = fuzz(20250117, 4000);
const SEED = FUZZ.seed;
const ITERATIONS = FUZZ.iterations;

const withSeed = (name: string, body: (rnd: SeededRandom) => void): void => FUZZ.case(name, body);

const SAMPLE = (() => {
  try {
    return readFileSync(new URL('../../config/grid.xml', import.meta.url), 'utf8');
  } catch {
    return '<grid><cluster-name>dev</cluster-name></grid>';
  }
})();

const SEEDS = [
  SAMPLE,
  '<?xml version="1.0" encoding="UTF-8"?>\n<grid xmlns="urn:x">\n  <map name="a*"><backup-count>1</backup-count></map>\n</grid>\n',
  '<a x="1" y=\'2\'><!-- c --><![CDATA[<raw>]]>t&amp;&#65;&#x42;<b/></a>',
];

const FRAGMENTS = [
  '<', '>', '/>', '</', '<a>', '</a>', '<b x="1">', '</b>', '="', '"', "'", '=', ' ', '\n', '\r\n', '\t',
  '&', ';', '&amp;', '&lt;', '&#', '&#x', '&#1114112;', '&#xD800;', '&xxe;', '&#65;', '&toString;', '&__proto__;', '&constructor;',
  '<!--', '-->', '<![CDATA[', ']]>', '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>', '<!ENTITY', '<?xml version="1.0"?>',
  '<?pi x?>', '?>', 'xmlns="u"', 'xsi:a="b"', 'é', '\u{1F600}', '\uD800', '\u0000', '\uFEFF', '${X}', 'grid', 'map', 'name',
];

function pick<T>(rnd: SeededRandom, items: readonly T[]): T {
  return items[rnd.nextInt(items.length)] as T;
}

function mutate(rnd: SeededRandom, input: string): string {
  let s = input;
  const edits = 1 + rnd.nextInt(8);
  for (let i = 0; i < edits; i++) {
    const at = rnd.nextInt(s.length + 1);
    switch (rnd.nextInt(5)) {
      case 0: // delete a span
        s = s.slice(0, at) + s.slice(at + rnd.nextInt(10));
        break;
      case 1: // insert a fragment
        s = s.slice(0, at) + pick(rnd, FRAGMENTS) + s.slice(at);
        break;
      case 2: // replace one character with a random code unit
        s = s.slice(0, at) + String.fromCharCode(rnd.nextInt(0x10000)) + s.slice(at + 1);
        break;
      case 3: {
        // duplicate a span somewhere else
        const from = rnd.nextInt(s.length + 1);
        const span = s.slice(from, from + rnd.nextInt(40));
        s = s.slice(0, at) + span + s.slice(at);
        break;
      }
      default: // swap two halves
        s = s.slice(at) + s.slice(0, at);
    }
  }
  return s;
}

function soup(rnd: SeededRandom): string {
  const n = rnd.nextInt(60);
  let s = rnd.next() < 0.5 ? '<r>' : '';
  for (let i = 0; i < n; i++) s += pick(rnd, FRAGMENTS);
  return rnd.next() < 0.5 ? `${s}</r>` : s;
}

function nested(rnd: SeededRandom): string {
  const depth = 1 + rnd.nextInt(200);
  const names = ['a', 'b', 'grid', 'x-y', 'n.s'];
  const stack: string[] = [];
  let s = '';
  for (let i = 0; i < depth; i++) {
    const name = pick(rnd, names);
    stack.push(name);
    s += rnd.next() < 0.2 ? `<${name} k="${i}">` : `<${name}>`;
    if (rnd.next() < 0.1) s += pick(rnd, FRAGMENTS);
  }
  while (stack.length > 0) s += `</${stack.pop()}>`;
  return rnd.next() < 0.3 ? mutate(rnd, s) : s;
}

function huge(rnd: SeededRandom): string {
  const unit = pick(rnd, ['x', 'é', '<b/>', '&amp;', '<!--c-->', '\n', '<a>', '&#x1F600;', 'a="1" ']);
  const target = 1024 * 1024 + rnd.nextInt(2) * 4096 - 8192 + rnd.nextInt(16384);
  const body = unit.repeat(Math.max(1, Math.floor(target / unit.length)));
  return rnd.next() < 0.5 ? `<r>${body}</r>` : `<r ${body}/>`;
}

/** Parses and checks the contract; returns elapsed milliseconds. */
function check(input: string): number {
  // CPU time of this process, not wall time: a test runner descheduled on a busy machine (other
  // suites, a simulation run beside) must not look like a slow parser.
  const start = process.cpuUsage();
  try {
    const root = parseXml(input);
    assertTree(root);
  } catch (e) {
    if (!(e instanceof XmlParseError)) {
      throw new Error(`non-XmlParseError ${String(e)} for input ${JSON.stringify(input.slice(0, 200))}`);
    }
    assert.ok(e.line >= 1 && e.column >= 1, `bad position ${e.line}:${e.column}`);
    assert.equal(e.message, `${e.line}:${e.column}: ${e.reason}`);
  }
  const used = process.cpuUsage(start);
  const ms = (used.user + used.system) / 1000;
  // Generous budget (GC pauses): 250 ms of CPU plus 1 ms per 2 KiB. A quadratic path on 1 MiB
  // would take minutes.
  const budget = 250 + input.length / 2048;
  assert.ok(ms < budget, `took ${ms.toFixed(1)} ms (budget ${budget.toFixed(0)}) for input of ${input.length} chars: ${JSON.stringify(input.slice(0, 80))}`);
  return ms;
}

function assertTree(el: XmlElement, depth = 1): void {
  assert.ok(el.name.length > 0);
  assert.ok(el.line >= 1 && el.column >= 1);
  assert.ok(depth <= 64);
  for (const c of el.children) {
    if (c.kind === 'element') assertTree(c, depth + 1);
    else assert.equal(typeof c.value, 'string');
  }
}

withSeed('mutated valid documents only ever parse or throw XmlParseError', (rnd) => {
  for (let i = 0; i < ITERATIONS; i++) check(mutate(rnd, pick(rnd, SEEDS)));
});

withSeed('fragment soups only ever parse or throw XmlParseError', (rnd) => {
  for (let i = 0; i < ITERATIONS; i++) check(soup(rnd));
});

withSeed('random garbage code units only ever parse or throw XmlParseError', (rnd) => {
  for (let i = 0; i < ITERATIONS / 4; i++) {
    let s = '';
    const n = rnd.nextInt(200);
    for (let j = 0; j < n; j++) s += String.fromCharCode(rnd.nextInt(rnd.next() < 0.8 ? 128 : 0x10000));
    check(s);
  }
});

withSeed('deeply nested documents respect the depth limit', (rnd) => {
  for (let i = 0; i < ITERATIONS / 4; i++) check(nested(rnd));
});

withSeed('huge documents near and over the size limit stay within the time budget', (rnd) => {
  for (let i = 0; i < 12; i++) check(huge(rnd));
});

/** Serializes a random valid tree, with escapes, and expects the parser to give the same tree back. */
withSeed('random valid trees round-trip through the parser', (rnd) => {
  const chars = ['a', 'Z', ' ', '<', '>', '&', '"', "'", '\n', 'é', '\u{1F600}', ']]', '-'];
  const randomText = (): string => Array.from({ length: rnd.nextInt(8) }, () => pick(rnd, chars)).join('');
  const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
  interface Tree { name: string; attrs: [string, string][]; text: string; children: Tree[] }
  const gen = (depth: number): Tree => ({
    name: pick(rnd, ['a', 'b', 'c-d', 'e.f', 'g_h']),
    attrs: Array.from({ length: rnd.nextInt(3) }, (_, i) => [`k${i}`, randomText()] as [string, string]),
    text: randomText(),
    children: depth > 5 ? [] : Array.from({ length: rnd.nextInt(3) }, () => gen(depth + 1)),
  });
  const write = (t: Tree): string =>
    `<${t.name}${t.attrs.map(([k, v]) => ` ${k}="${esc(v)}"`).join('')}>${esc(t.text)}${t.children.map(write).join('')}</${t.name}>`;
  const read = (el: XmlElement): Tree => ({
    name: el.name,
    attrs: el.attributes.map((a) => [a.name, a.value] as [string, string]),
    text: el.children.map((c) => (c.kind === 'text' ? c.value : '')).join(''),
    children: el.children.filter((c): c is XmlElement => c.kind === 'element').map(read),
  });
  for (let i = 0; i < ITERATIONS / 4; i++) {
    const tree = gen(0);
    assert.deepEqual(read(parseXml(write(tree))), tree);
  }
});

withSeed('the loader answers mutated configurations with a Config or one exit-2 line, never a throw', (rnd) => {
  const rich =
    '<grid><cluster-name>${X}</cluster-name><properties><property name="grid.partition.count">7</property></properties>' +
    '<network><port port-count="3">5701</port><join><tcp-ip enabled="true"><member-list><member>h:1</member></member-list></tcp-ip></join>' +
    '<rest-api enabled="true"><endpoint-group name="DATA"/></rest-api><ssl enabled="false"/></network>' +
    '<map name="m*"><backup-count>2</backup-count><eviction size="5" eviction-policy="LRU"/><wan-replication-ref name="w"/></map>' +
    '<queue name="q"><max-size>3</max-size></queue><wan-replication name="w"><batch-publisher><target-endpoints>h:2</target-endpoints></batch-publisher></wan-replication>' +
    '<security enabled="true"><realms><realm name="r"><identity><username-password username="u" password="p"/></identity></realm></realms><member-authentication realm="r"/></security>' +
    '<cp-subsystem><cp-member-count>3</cp-member-count></cp-subsystem></grid>';
  for (let i = 0; i < ITERATIONS / 4; i++) {
    const text = mutate(rnd, rnd.next() < 0.5 ? rich : SAMPLE);
    const r = loadConfig({
      argv: [],
      env: { X: 'x' },
      cwd: '/w',
      readFile: (p) => {
        if (p === '/w/grid.xml') return text;
        throw new Error('ENOENT');
      },
      fileExists: (p) => p === '/w/grid.xml',
      randomHex: () => '00',
      version: '0',
    });
    if (r.kind === 'exit') {
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^grid: config error: [^\n]+\n$/);
    }
  }
});
