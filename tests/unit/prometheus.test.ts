// Checks the Prometheus text encoder (src/http/prometheus.ts) against the strict 0.0.4 parser of
// tests/harness/prometheus-parser.ts: HELP/TYPE before samples, label escaping (backslash, double
// quote, line feed) round-trips, histograms come out cumulative with +Inf equal to _count, values
// spell +Inf/-Inf/NaN; the encoder refuses broken families (bad names, counters without _total,
// non-cumulative buckets, a family twice). The parser itself is checked to refuse each kind of bad
// text, so that a passing parse means something.
import test from 'node:test';
import assert from 'node:assert/strict';
import { encodeExposition, escapeHelp, escapeLabelValue, formatValue, PROMETHEUS_CONTENT_TYPE, type Family } from '../../src/http/prometheus.js';
import { ExpositionError, parseExposition, sampleValue } from '../harness/prometheus-parser.js';

const member: [string, string][] = [['member', '[127.0.0.1]:5701']];

const families: Family[] = [
  { name: 'x_things', help: 'Things.', type: 'gauge', samples: [{ labels: [['map', 'a']], value: 3 }, { labels: [['map', 'b']], value: 0.5 }] },
  { name: 'x_done_total', help: 'Done with a \\ backslash\nand a line feed.', type: 'counter', samples: [{ labels: [], value: 7 }] },
  {
    name: 'x_latency_seconds',
    help: 'Latency.',
    type: 'histogram',
    samples: [
      { labels: [['kind', 'get']], bounds: [0.001, 0.01, 1], cumulative: [1, 4, 4, 5], sum: 12.5, count: 5 },
      { labels: [['kind', 'put']], bounds: [0.001, 0.01, 1], cumulative: [0, 0, 0, 0], sum: 0, count: 0 },
    ],
  },
];

test('the content type is the 0.0.4 text format', () => {
  assert.equal(PROMETHEUS_CONTENT_TYPE, 'text/plain; version=0.0.4; charset=utf-8');
});

test('encoded families parse strictly and keep their values', () => {
  const text = encodeExposition(families, member);
  const parsed = parseExposition(text);
  assert.deepEqual([...parsed.keys()], ['x_things', 'x_done_total', 'x_latency_seconds']);
  assert.equal(parsed.get('x_done_total')?.help, 'Done with a \\ backslash\nand a line feed.');
  assert.equal(parsed.get('x_latency_seconds')?.type, 'histogram');
  assert.equal(sampleValue(parsed, 'x_things', { map: 'b' }), 0.5);
  assert.equal(sampleValue(parsed, 'x_latency_seconds', { kind: 'get', le: '0.01' }, 'x_latency_seconds_bucket'), 4);
  assert.equal(sampleValue(parsed, 'x_latency_seconds', { kind: 'get', le: '+Inf' }, 'x_latency_seconds_bucket'), 5);
  assert.equal(sampleValue(parsed, 'x_latency_seconds', { kind: 'get' }, 'x_latency_seconds_sum'), 12.5);
  for (const f of parsed.values()) for (const s of f.samples) assert.equal(s.labels.member, '[127.0.0.1]:5701', `${s.name} carries member`);
  assert.match(text, /^# HELP x_things Things\.\n# TYPE x_things gauge\nx_things\{member="\[127\.0\.0\.1\]:5701",map="a"\} 3\n/);
  assert.ok(text.includes('x_latency_seconds_bucket{member="[127.0.0.1]:5701",kind="get",le="+Inf"} 5\n'));
});

test('label values escape backslash, double quote and line feed, and round-trip', () => {
  const nasty = 'a\\b"c\nd}{,=é';
  assert.equal(escapeLabelValue(nasty), 'a\\\\b\\"c\\nd}{,=é');
  const text = encodeExposition([{ name: 'x_map_entries', help: 'h', type: 'gauge', samples: [{ labels: [['map', nasty]], value: 1 }] }], [['member', 'm"\\\n']]);
  assert.equal(text.split('\n').length, 4, 'no raw line feed inside a sample');
  const parsed = parseExposition(text);
  const sample = parsed.get('x_map_entries')?.samples[0];
  assert.equal(sample?.labels.map, nasty);
  assert.equal(sample?.labels.member, 'm"\\\n');
});

test('HELP escapes backslash and line feed only; values spell Inf and NaN as the format does', () => {
  assert.equal(escapeHelp('a\\b\nc"d'), 'a\\\\b\\nc"d');
  assert.deepEqual([Infinity, -Infinity, NaN, 0, 1.5, 1e-7, 12345678901].map(formatValue), ['+Inf', '-Inf', 'NaN', '0', '1.5', '1e-7', '12345678901']);
  const parsed = parseExposition(encodeExposition([{ name: 'x_g', help: 'h', type: 'gauge', samples: [{ labels: [['k', 'inf']], value: Infinity }, { labels: [['k', 'nan']], value: NaN }] }], []));
  assert.equal(sampleValue(parsed, 'x_g', { k: 'inf' }), Infinity);
  assert.ok(Number.isNaN(sampleValue(parsed, 'x_g', { k: 'nan' })));
});

test('the encoder refuses families that would break the format', () => {
  const bad: [string, Family[]][] = [
    ['bad metric name', [{ name: '1x', help: '', type: 'gauge', samples: [] }]],
    ['counter without _total', [{ name: 'x_count', help: '', type: 'counter', samples: [] }]],
    ['bad label name', [{ name: 'x', help: '', type: 'gauge', samples: [{ labels: [['a-b', 'v']], value: 1 }] }]],
    ['reserved label name', [{ name: 'x', help: '', type: 'gauge', samples: [{ labels: [['__x', 'v']], value: 1 }] }]],
    ['le on a gauge', [{ name: 'x', help: '', type: 'gauge', samples: [{ labels: [['le', '1']], value: 1 }] }]],
    ['family twice', [{ name: 'x', help: '', type: 'gauge', samples: [] }, { name: 'x', help: '', type: 'gauge', samples: [] }]],
    ['non-cumulative buckets', [{ name: 'h', help: '', type: 'histogram', samples: [{ labels: [], bounds: [1, 2], cumulative: [3, 2, 3], sum: 1, count: 3 }] }]],
    ['+Inf bucket differs from count', [{ name: 'h', help: '', type: 'histogram', samples: [{ labels: [], bounds: [1], cumulative: [1, 2], sum: 1, count: 3 }] }]],
    ['bounds not increasing', [{ name: 'h', help: '', type: 'histogram', samples: [{ labels: [], bounds: [2, 1], cumulative: [1, 1, 1], sum: 1, count: 1 }] }]],
  ];
  for (const [what, f] of bad) assert.throws(() => encodeExposition(f, member), /./, what);
});

test('the strict parser refuses each kind of bad text', () => {
  const head = '# HELP x_total h\n# TYPE x_total counter\n';
  const hist = '# HELP h_seconds h\n# TYPE h_seconds histogram\n';
  const cases: [string, string][] = [
    ['no final line feed', `${head}x_total 1`],
    ['sample before any HELP/TYPE', 'x_total 1\n'],
    ['sample of an undeclared family', `${head}y_total 1\n`],
    ['TYPE without HELP', '# TYPE x_total counter\nx_total 1\n'],
    ['TYPE after samples', '# HELP x_total h\nx_total 1\n# TYPE x_total counter\n'],
    ['bad metric name in TYPE', '# HELP 9x h\n# TYPE 9x counter\n'],
    ['unknown type', '# HELP x h\n# TYPE x thing\n'],
    ['counter without _total', '# HELP x h\n# TYPE x counter\nx 1\n'],
    ['unescaped quote in a label value', `${head}x_total{a="b"c"} 1\n`],
    ['bad escape in a label value', `${head}x_total{a="b\\tc"} 1\n`],
    ['unterminated label value', `${head}x_total{a="b} 1\n`],
    ['label twice', `${head}x_total{a="1",a="2"} 1\n`],
    ['reserved label', `${head}x_total{__a="1"} 1\n`],
    ['value not a float', `${head}x_total 1,5\n`],
    ['duplicate series', `${head}x_total{a="1",b="2"} 1\nx_total{b="2",a="1"} 2\n`],
    ['family split in two groups', `${head}x_total{a="1"} 1\n# HELP y h\n# TYPE y gauge\ny 1\nx_total{a="2"} 1\n`],
    ['histogram without +Inf', `${hist}h_seconds_bucket{le="1"} 1\nh_seconds_sum 1\nh_seconds_count 1\n`],
    ['histogram not cumulative', `${hist}h_seconds_bucket{le="1"} 2\nh_seconds_bucket{le="+Inf"} 1\nh_seconds_sum 1\nh_seconds_count 1\n`],
    ['histogram +Inf differs from _count', `${hist}h_seconds_bucket{le="+Inf"} 2\nh_seconds_sum 1\nh_seconds_count 1\n`],
    ['histogram without _count', `${hist}h_seconds_bucket{le="+Inf"} 1\nh_seconds_sum 1\n`],
    ['bucket without le', `${hist}h_seconds_bucket 1\nh_seconds_sum 1\nh_seconds_count 1\n`],
    ['plain sample in a histogram', `${hist}h_seconds 1\n`],
  ];
  for (const [what, text] of cases) assert.throws(() => parseExposition(text), ExpositionError, what);
  // And what the format allows: other comments, empty lines, a trailing comma, a timestamp.
  const ok = parseExposition(`# a comment\n${head}\nx_total{a="1",} 1 1700000000000\n`);
  assert.equal(sampleValue(ok, 'x_total', { a: '1' }), 1);
});
