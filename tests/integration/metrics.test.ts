// Checks the metrics call of real members (docs/operations.md "Metrics", docs/rest.md):
// - one member with REST and DATA on: after known map and queue calls, the Prometheus text from
//   `Accept: text/plain`, from `Accept: application/openmetrics-text` and from
//   `/grid/rest/metrics/prometheus` each parses with the STRICT 0.0.4 parser
//   (tests/harness/prometheus-parser.ts), carries the 0.0.4 content type, has every family of the
//   catalog and the `member` label (this member's address) on every sample, and counts exactly
//   what was done (owned entries per map, queue items, requests per kind and status class,
//   histogram counts); a waiting poll shows per queue; the JSON form keeps its flat numeric keys,
//   each read by some Prometheus family, and adds the nested ones; HEAD and wrong methods;
// - two members with backup-count 1: each entry is counted once as owned and once as backup across
//   the members (the JSON `mapEntries` used to count both), in both forms.
// How: raw sockets; waits are conditions polled with deadlines, never sleeps; no time is asserted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request, type RawResponse } from '../harness/raw-http.js';
import { Connection, waitFor } from '../harness/connection.js';
import { freePorts, killAll, startClusterMember, waitSettled } from '../harness/cluster.js';
import { parseExposition, sampleValue, type ParsedFamily } from '../harness/prometheus-parser.js';
import { METRIC_FAMILIES } from '../../src/http/metrics-catalog.js';

const TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const XML = `<grid><network><rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api></network></grid>`;

/** The keys of the JSON form that are not scalar figures (docs/operations.md "Metrics"). */
const NESTED_KEYS = new Set(['nodeState', 'clusterState', 'perMap', 'perQueue', 'requestsByKind', 'gc', 'wan', 'cpGroups', 'cpCallsByStructure']);

async function scrape(port: number, path: string, accept?: string): Promise<{ reply: RawResponse; families: Map<string, ParsedFamily> }> {
  const reply = await request(port, 'GET', path, accept === undefined ? {} : { headers: { Accept: accept } });
  assert.equal(reply.status, 200, `${path} ${accept ?? ''}: ${reply.statusLine}`);
  assert.equal(reply.headers['content-type'], TEXT_TYPE);
  return { reply, families: parseExposition(reply.text()) };
}

async function jsonMetrics(port: number): Promise<Record<string, unknown>> {
  const r = await request(port, 'GET', '/grid/rest/metrics');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  return r.json() as Record<string, unknown>;
}

async function localAddress(port: number): Promise<string> {
  const body = (await request(port, 'GET', '/grid/rest/cluster')).json() as { members: { address: string; localMember: boolean }[] };
  const me = body.members.find((m) => m.localMember);
  assert.ok(me !== undefined);
  return me.address;
}

describe('one member', () => {
  let member: MemberProcess;
  let port: number;

  before(async () => {
    member = await startMember({ xml: XML });
    port = member.port;
  });

  after(async () => {
    assert.equal(await member.stop(), 0);
  });

  test('both text forms parse strictly and count what was done', async () => {
    const puts = 5;
    for (let i = 0; i < puts; i++) assert.equal((await request(port, 'POST', `/grid/rest/maps/m/k${i}`, { body: `v${i}` })).status, 200);
    assert.equal((await request(port, 'PUT', '/grid/rest/maps/we%22ird%5Cname/k', { body: 'v' })).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await request(port, 'GET', `/grid/rest/maps/m/k${i}`)).status, 200);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/m/absent')).status, 204);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/m')).status, 400);
    for (let i = 0; i < 2; i++) assert.equal((await request(port, 'POST', '/grid/rest/queues/q', { body: `item${i}` })).status, 200);
    assert.equal((await request(port, 'GET', '/grid/rest/queues/q/size')).text(), '2');
    assert.equal((await request(port, 'GET', '/grid/rest/nothing-here')).status, 404);

    const address = await localAddress(port);
    const forms = [
      await scrape(port, '/grid/rest/metrics', 'text/plain'),
      await scrape(port, '/grid/rest/metrics', 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'),
      await scrape(port, '/grid/rest/metrics/prometheus'),
    ];
    for (const { reply, families } of forms) {
      assert.equal(reply.headers.vary, 'Accept');
      assert.deepEqual([...families.keys()].sort(), METRIC_FAMILIES.map((f) => f.name).sort(), 'every family of the catalog, nothing else');
      for (const f of families.values()) {
        assert.match(f.name, /^grid_/);
        for (const s of f.samples) assert.equal(s.labels.member, address, `${s.name} carries member`);
      }
      assert.equal(sampleValue(families, 'grid_map_entries', { map: 'm', replica: 'owned' }), puts);
      assert.equal(sampleValue(families, 'grid_map_entries', { map: 'm', replica: 'backup' }), 0);
      assert.equal(sampleValue(families, 'grid_map_entries', { map: 'we"ird\\name', replica: 'owned' }), 1, 'an escaped map name round-trips');
      assert.equal(sampleValue(families, 'grid_queue_items', { queue: 'q', replica: 'owned' }), 2);
      assert.equal(sampleValue(families, 'grid_queue_items', { queue: 'q', replica: 'backup' }), 0);
      assert.equal(sampleValue(families, 'grid_http_requests_total', { kind: 'map_put', status_class: '2xx' }), puts + 1);
      assert.equal(sampleValue(families, 'grid_http_requests_total', { kind: 'map_get', status_class: '2xx' }), 4, '200 and 204 are 2xx');
      assert.equal(sampleValue(families, 'grid_http_requests_total', { kind: 'map_get', status_class: '4xx' }), 1);
      assert.equal(sampleValue(families, 'grid_http_requests_total', { kind: 'queue_offer', status_class: '2xx' }), 2);
      assert.equal(sampleValue(families, 'grid_http_requests_total', { kind: 'queue_size', status_class: '2xx' }), 1);
      assert.ok(sampleValue(families, 'grid_http_requests_total', { kind: 'other', status_class: '4xx' }) >= 1, 'the 404');
      const h = 'grid_http_request_duration_seconds';
      assert.equal(sampleValue(families, h, { kind: 'map_put' }, `${h}_count`), puts + 1);
      assert.equal(sampleValue(families, h, { kind: 'map_put', le: '+Inf' }, `${h}_bucket`), puts + 1);
      assert.equal(sampleValue(families, h, { kind: 'queue_poll' }, `${h}_count`), 0);
      assert.equal(sampleValue(families, 'grid_node_state', { state: 'ACTIVE' }), 1);
      assert.equal(sampleValue(families, 'grid_node_state', { state: 'PASSIVE' }), 0);
      assert.equal(sampleValue(families, 'grid_cluster_state', { state: 'ACTIVE' }), 1);
      assert.equal(sampleValue(families, 'grid_cluster_safe'), 1);
      assert.equal(sampleValue(families, 'grid_cluster_size'), 1);
      assert.equal(sampleValue(families, 'grid_partitions_owned'), 271);
      assert.ok(sampleValue(families, 'grid_process_resident_memory_bytes') > 0);
      assert.ok(sampleValue(families, 'grid_http_connections') >= 1, 'this scrape\'s connection');
      assert.equal(families.get('grid_gc_collections_total')?.samples.length, 4, 'one series per GC kind');
    }
    // The scrapes themselves are cluster_info requests, counted once answered: the third saw two.
    const third = forms[2]?.families as Map<string, ParsedFamily>;
    assert.equal(sampleValue(third, 'grid_http_requests_total', { kind: 'cluster_info', status_class: '2xx' }), 3, 'the /cluster call and two scrapes');
  });

  test('a waiting poll shows under its queue, and goes when its client leaves', async () => {
    const poll = await Connection.open(port);
    poll.send('DELETE', '/grid/rest/queues/waiting/60');
    const waiting = async (): Promise<number> => sampleValue((await scrape(port, '/grid/rest/metrics/prometheus')).families, 'grid_queue_waiting_polls', { queue: 'waiting' });
    await waitFor(async () => (await waiting()) === 1, 'the poll to wait');
    assert.equal(sampleValue((await scrape(port, '/grid/rest/metrics/prometheus')).families, 'grid_waiting_polls'), 1);
    poll.destroy();
    await waitFor(async () => (await jsonMetrics(port)).waitingPolls === 0, 'the poll to stop waiting');
  });

  test('JSON by default: the flat keys are numbers, each read by a Prometheus family; the nested figures are added', async () => {
    const json = await jsonMetrics(port);
    const covered = new Set(METRIC_FAMILIES.flatMap((f) => f.jsonKeys));
    for (const [k, v] of Object.entries(json)) {
      if (NESTED_KEYS.has(k)) continue;
      assert.equal(typeof v, 'number', `${k} is a number`);
      assert.ok(covered.has(k), `JSON key ${k} is exposed by some Prometheus family`);
    }
    for (const k of covered) assert.ok(k in json, `${k} is in the JSON`);
    assert.equal(json.mapEntries, 6, 'owned entries: 5 in m, 1 in the other map');
    assert.equal(json.mapEntriesBackup, 0);
    assert.deepEqual((json.perMap as Record<string, unknown>).m, { owned: 5, backup: 0 });
    assert.equal(json.nodeState, 'ACTIVE');
    const byKind = json.requestsByKind as Record<string, Record<string, number>>;
    assert.equal(byKind.map_put?.['2xx'], 6);
    assert.equal(typeof (json.gc as Record<string, unknown>).major, 'object');
    for (const accept of ['*/*', 'application/json', 'text/html,*/*;q=0.8']) {
      const r = await request(port, 'GET', '/grid/rest/metrics', { headers: { Accept: accept } });
      assert.equal(r.headers['content-type'], 'application/json', accept);
    }
  });

  test('HEAD answers like GET without a body; other methods are 405', async () => {
    const head = await request(port, 'HEAD', '/grid/rest/metrics/prometheus');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-type'], TEXT_TYPE);
    assert.ok(Number(head.headers['content-length']) > 0);
    for (const path of ['/grid/rest/metrics', '/grid/rest/metrics/prometheus']) {
      const r = await request(port, 'POST', path, { body: '' });
      assert.equal(r.status, 405, path);
      assert.match(r.headers.allow ?? '', /GET/);
    }
  });
});

test('two members: each entry and item is counted once as owned and once as backup', { timeout: 90_000 }, async () => {
  const ports = await freePorts(2);
  const members: MemberProcess[] = [];
  try {
    for (const p of ports) members.push(await startClusterMember(p, ports));
    await waitSettled(ports, 2, 60_000);
    const n = 40;
    for (let i = 0; i < n; i++) assert.equal((await request(ports[i % 2] as number, 'POST', `/grid/rest/maps/spread/k${i}`, { body: 'v' })).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await request(ports[0] as number, 'POST', '/grid/rest/queues/jobs', { body: `j${i}` })).status, 200);
    let owned = 0;
    let backup = 0;
    let ownedItems = 0;
    let backupItems = 0;
    for (const p of ports) {
      const { families } = await scrape(p, '/grid/rest/metrics', 'text/plain');
      const mine = sampleValue(families, 'grid_map_entries', { map: 'spread', replica: 'owned' });
      const theirs = sampleValue(families, 'grid_map_entries', { map: 'spread', replica: 'backup' });
      const json = await jsonMetrics(p);
      assert.equal(json.mapEntries, mine, 'JSON mapEntries counts owned entries only');
      assert.equal(json.mapEntriesBackup, theirs);
      assert.equal(sampleValue(families, 'grid_cluster_size'), 2);
      owned += mine;
      backup += theirs;
      ownedItems += sampleValue(families, 'grid_queue_items', { queue: 'jobs', replica: 'owned' });
      backupItems += sampleValue(families, 'grid_queue_items', { queue: 'jobs', replica: 'backup' });
    }
    assert.equal(owned, n, 'owned entries add up to the entries of the map');
    assert.equal(backup, n, 'one backup copy of each');
    assert.equal(ownedItems, 3);
    assert.equal(backupItems, 3);
  } finally {
    await killAll(members);
  }
});
