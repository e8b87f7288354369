// Checks the metric catalog (src/http/metrics-catalog.ts) and the forms of the metrics call:
// - docs/operations.md "Metrics" lists exactly the families of the code, with the same type and
//   labels, both ways (a metric added to one and not the other fails here);
// - every name has the `grid_` prefix, counters end in `_total`, and the text of a made-up snapshot
//   (odd map names included) parses with the strict parser, every sample carrying `member`;
// - the JSON form keeps the flat numeric keys and adds the nested objects;
// - which Accept headers get the text format;
// - request counting per kind: buckets cumulative, +Inf equal to the count, queue GET split.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { METRIC_FAMILIES, metricsJson, prometheusText } from '../../src/http/metrics-catalog.js';
import { wantsPrometheusText } from '../../src/http/handlers/info.js';
import { KIND, LATENCY_BOUNDS_SECONDS, REQUEST_KINDS, RequestStats, STATUS_CLASSES, resolveKind } from '../../src/http/request-stats.js';
import type { MetricsSnapshot } from '../../src/member/metrics-snapshot.js';
import { REPO_ROOT } from '../harness/member-process.js';
import { parseExposition, sampleValue } from '../harness/prometheus-parser.js';

interface DocRow {
  readonly type: string;
  readonly labels: string;
}

/** The rows of the table in the "## Metrics" section of docs/operations.md. */
function documentedMetrics(): Map<string, DocRow> {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
  const start = text.indexOf('\n## Metrics\n');
  assert.ok(start >= 0, 'docs/operations.md has a Metrics section');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const rows = new Map<string, DocRow>();
  for (const m of section.matchAll(/^\| `(grid_[a-z0-9_]+)` \| (\w+) \| ([^|]*) \|/gm)) {
    const [, name, type, labels] = m as unknown as [string, string, string, string];
    assert.ok(!rows.has(name), `${name} is listed twice in docs/operations.md`);
    rows.set(name, { type, labels: labels.trim() });
  }
  return rows;
}

function labelsOf(f: (typeof METRIC_FAMILIES)[number]): string {
  return ['member', ...f.labels, ...(f.type === 'histogram' ? ['le'] : [])].map((l) => `\`${l}\``).join(', ');
}

test('docs/operations.md lists every metric of the code, and nothing else, with its type and labels', () => {
  const documented = documentedMetrics();
  for (const f of METRIC_FAMILIES) {
    const row = documented.get(f.name);
    assert.ok(row !== undefined, `${f.name} is missing from docs/operations.md "Metrics"`);
    assert.equal(row.type, f.type, `${f.name}: type in the docs`);
    assert.equal(row.labels, labelsOf(f), `${f.name}: labels in the docs`);
  }
  const inCode = new Set(METRIC_FAMILIES.map((f) => f.name));
  for (const name of documented.keys()) assert.ok(inCode.has(name), `docs/operations.md lists ${name}, which the code does not expose`);
});

test('names have the grid_ prefix, counters end in _total, nothing is declared twice', () => {
  const names = new Set<string>();
  const jsonKeys = new Set<string>();
  for (const f of METRIC_FAMILIES) {
    assert.match(f.name, /^grid_[a-z0-9_]+$/);
    assert.equal(f.type === 'counter', f.name.endsWith('_total'), `${f.name}: _total exactly on counters`);
    assert.ok(!names.has(f.name), `${f.name} twice`);
    names.add(f.name);
    for (const k of f.jsonKeys) {
      assert.ok(!jsonKeys.has(k), `JSON key ${k} read by two families`);
      jsonKeys.add(k);
    }
  }
});

function snapshot(): MetricsSnapshot {
  const stats = new RequestStats();
  stats.record(KIND.MAP_GET, 200, 0.00005);
  stats.record(KIND.MAP_GET, 204, 0.002);
  stats.record(KIND.MAP_GET, 500, 400);
  stats.record(KIND.QUEUE_POLL, 200, 3);
  const flat: Record<string, number> = {};
  for (const f of METRIC_FAMILIES) for (const k of f.jsonKeys) flat[k] = 1;
  flat.mapEntries = 5;
  flat.mapEntriesBackup = 2;
  return {
    member: '[127.0.0.1]:5701',
    nodeState: 'ACTIVE',
    clusterState: 'FROZEN',
    flat,
    maps: [
      { name: 'plain', owned: 3, backup: 2 },
      { name: 'we"ird\\na\nme', owned: 2, backup: 0 },
      { name: '__proto__', owned: 0, backup: 0 },
    ],
    queues: [{ name: 'jobs', owned: 4, backup: 0, waitingPolls: 1 }],
    cpCalls: [{ structure: 'long', outcome: 'ok', count: 3, sumSeconds: 0.004, cumulativeBuckets: [1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3] }],
    cp: [{ group: 'default', role: 'leader', term: 3, commitIndex: 40, appliedIndex: 40, logEntries: 12, logBytes: 900, snapshotIndex: 28, leaderChanges: 2, electionsStarted: 1, appendBatches: 30, appendEntries: 40, refusedWrites: 0, sessions: 1, waitingCalls: 0 }],
    wan: [{ replication: 'to-b', publisher: 'b', state: 'PAUSED', queued: 7, backupQueued: 3, sent: 10, acked: 9, dropped: 1, resent: 2, lagMs: 1500, syncsRunning: 0, bytesSent: 4096, bytesReceived: 128 }],
    runtime: {
      flat: {},
      statusClasses: STATUS_CLASSES,
      latencyBoundsSeconds: LATENCY_BOUNDS_SECONDS,
      requestKinds: stats.figures(),
      gc: [{ kind: 'minor', count: 3, pauseSeconds: 0.004 }],
    },
  };
}

test('the text of a snapshot parses strictly; every family is there and every sample names the member', () => {
  const parsed = parseExposition(prometheusText(snapshot()));
  assert.deepEqual([...parsed.keys()].sort(), METRIC_FAMILIES.map((f) => f.name).sort());
  for (const f of parsed.values()) {
    assert.ok(f.samples.length > 0, `${f.name} has samples`);
    for (const s of f.samples) assert.equal(s.labels.member, '[127.0.0.1]:5701');
  }
  assert.equal(sampleValue(parsed, 'grid_map_entries', { map: 'plain', replica: 'owned' }), 3);
  assert.equal(sampleValue(parsed, 'grid_map_entries', { map: 'plain', replica: 'backup' }), 2);
  assert.equal(sampleValue(parsed, 'grid_map_entries', { map: 'we"ird\\na\nme', replica: 'owned' }), 2);
  assert.equal(sampleValue(parsed, 'grid_queue_items', { queue: 'jobs', replica: 'owned' }), 4);
  assert.equal(sampleValue(parsed, 'grid_queue_waiting_polls', { queue: 'jobs' }), 1);
  assert.equal(sampleValue(parsed, 'grid_cluster_state', { state: 'FROZEN' }), 1);
  assert.equal(sampleValue(parsed, 'grid_cluster_state', { state: 'ACTIVE' }), 0);
  assert.equal(sampleValue(parsed, 'grid_node_state', { state: 'ACTIVE' }), 1);
  assert.equal(sampleValue(parsed, 'grid_http_requests_total', { kind: 'map_get', status_class: '2xx' }), 2);
  assert.equal(sampleValue(parsed, 'grid_http_requests_total', { kind: 'map_get', status_class: '5xx' }), 1);
  const bucket = (le: string): number => sampleValue(parsed, 'grid_http_request_duration_seconds', { kind: 'map_get', le }, 'grid_http_request_duration_seconds_bucket');
  assert.equal(bucket('0.0001'), 1);
  assert.equal(bucket('0.0025'), 2);
  assert.equal(bucket('300'), 2, 'the 400 s request is above the last bound');
  assert.equal(bucket('+Inf'), 3);
  assert.equal(sampleValue(parsed, 'grid_gc_collections_total', { kind: 'minor' }), 3);
  assert.equal(sampleValue(parsed, 'grid_wan_queued_events', { replication: 'to-b', publisher: 'b' }), 7);
  assert.equal(sampleValue(parsed, 'grid_wan_lag_seconds', { replication: 'to-b', publisher: 'b' }), 1.5);
  assert.equal(sampleValue(parsed, 'grid_wan_publisher_state', { replication: 'to-b', publisher: 'b', state: 'PAUSED' }), 1);
  assert.equal(sampleValue(parsed, 'grid_wan_publisher_state', { replication: 'to-b', publisher: 'b', state: 'REPLICATING' }), 0);
});

test('the JSON form keeps every scalar key as a number and adds the nested figures', () => {
  const s = snapshot();
  const json = JSON.parse(JSON.stringify(metricsJson(s))) as Record<string, unknown>;
  for (const [k, v] of Object.entries(s.flat)) assert.equal(json[k], v, k);
  assert.equal(json.mapEntries, 5, 'owned entries only');
  assert.equal(json.nodeState, 'ACTIVE');
  const perMap = json.perMap as Record<string, { owned: number; backup: number }>;
  assert.deepEqual(perMap.plain, { owned: 3, backup: 2 });
  assert.deepEqual(Object.keys(perMap), ['plain', 'we"ird\\na\nme', '__proto__'], 'a map named __proto__ is an ordinary key');
  assert.deepEqual((json.perQueue as Record<string, unknown>).jobs, { owned: 4, backup: 0, waitingPolls: 1 });
  assert.deepEqual((json.wan as Record<string, unknown>)['to-b/b'], { state: 'PAUSED', queued: 7, backupQueued: 3, sent: 10, acked: 9, dropped: 1, resent: 2, lagMs: 1500, syncsRunning: 0, bytesSent: 4096, bytesReceived: 128 });
  const byKind = json.requestsByKind as Record<string, Record<string, number>>;
  assert.deepEqual(Object.keys(byKind), [...REQUEST_KINDS]);
  assert.equal(byKind.map_get?.['2xx'], 2);
  assert.equal(byKind.map_get?.count, 3);
  assert.deepEqual((json.gc as Record<string, unknown>).minor, { count: 3, pauseSeconds: 0.004 });
});

test('Accept: text/plain and OpenMetrics get the text; JSON, wildcards and browsers get JSON', () => {
  const text = [
    'text/plain',
    'text/plain; version=0.0.4',
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
    'TEXT/PLAIN',
    'application/json;q=0.5, text/plain',
  ];
  const json = ['*/*', 'application/json', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/plain;q=0', 'text/plain;q=0.5, application/json', ''];
  for (const a of text) assert.equal(wantsPrometheusText(a), true, a);
  for (const a of json) assert.equal(wantsPrometheusText(a), false, a);
});

test('request stats: per kind and status class, cumulative buckets, queue GET is size or poll', () => {
  const stats = new RequestStats();
  for (let i = 0; i < 10; i++) stats.record(KIND.MAP_PUT, 200, i * 0.001);
  stats.record(KIND.MAP_PUT, 304, 0.5);
  stats.record(KIND.MAP_PUT, 413, -1);
  const put = stats.figures().find((k) => k.kind === 'map_put');
  assert.ok(put !== undefined);
  assert.deepEqual(put.byStatusClass, [10, 1, 1, 0]);
  assert.equal(put.count, 12);
  assert.equal(put.cumulativeBuckets.length, LATENCY_BOUNDS_SECONDS.length + 1);
  assert.equal(put.cumulativeBuckets.at(-1), 12);
  for (let i = 1; i < put.cumulativeBuckets.length; i++) assert.ok((put.cumulativeBuckets[i] as number) >= (put.cumulativeBuckets[i - 1] as number));
  assert.ok(Math.abs(put.sumSeconds - 0.545) < 1e-9, 'a negative duration adds nothing to the sum');
  assert.equal(resolveKind(KIND.QUEUE_GET, ['size']), KIND.QUEUE_SIZE);
  assert.equal(resolveKind(KIND.QUEUE_GET, ['SiZe']), KIND.QUEUE_SIZE);
  assert.equal(resolveKind(KIND.QUEUE_GET, ['5']), KIND.QUEUE_POLL);
  assert.equal(resolveKind(KIND.QUEUE_GET, ['size', 'x']), KIND.QUEUE_POLL);
  assert.equal(resolveKind(KIND.MAP_GET, ['size']), KIND.MAP_GET);
});
