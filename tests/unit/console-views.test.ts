// The console's cluster views without sockets (src/console/): the event ring keeps the newest within
// its bounds, gives ids that carry their time and answers `since` from any member's id; the merge
// keeps each event once, newest first; the events query is checked; a gathered view says who
// answered and lists the rest as missing after the deadline or when a member leaves.
import test from 'node:test';
import assert from 'node:assert/strict';
import { compareNewestFirst, EventRing, eventIdTime, mergeEvents } from '../../src/console/event-ring.js';
import { parseEventsQuery } from '../../src/console/cluster-views.js';
import { ViewsService } from '../../src/console/views-service.js';
import { message, type Message } from '../../src/cluster/messages.js';
import { GridError } from '../../src/util/errors.js';
import { FakeTime } from '../harness/fake-time.js';

const clockAt = (t: { now: number }): { nowMs: () => number; monotonicMs: () => number } => ({ nowMs: () => t.now, monotonicMs: () => t.now });

test('the ring: ids carry their time, newest first, since answers only newer events, the oldest go at the bounds', () => {
  const t = { now: 1_000 };
  const ring = new EventRing('uuid-a', clockAt(t), 3);
  ring.record('member-joined', 'b joined', { member: 'uuid-b' });
  t.now = 2_000;
  ring.record('management-call', 'POST /grid/rest/log-level: 200', { actor: "'admin' from 10.0.0.9:5555" });
  t.now = 2_000;
  ring.record('member-left', 'b left');
  const all = ring.list(null, 10);
  assert.deepEqual(all.map((e) => e.kind), ['member-left', 'management-call', 'member-joined']);
  assert.equal(all[2]?.member, 'uuid-b');
  assert.equal(all[0]?.member, 'uuid-a', 'by default the member recording it');
  assert.equal(all[1]?.actor, "'admin' from 10.0.0.9:5555");
  assert.equal(eventIdTime(all[2]?.id as string), 1_000);
  assert.deepEqual(ring.list(all[1]?.id as string, 10).map((e) => e.kind), ['member-left'], 'since: newer than that event only');
  assert.deepEqual(ring.list(null, 1).map((e) => e.kind), ['member-left'], 'limit keeps the newest');
  t.now = 3_000;
  ring.record('master-changed', 'a took over');
  assert.equal(ring.size, 3);
  assert.deepEqual(ring.list(null, 10).map((e) => e.kind), ['master-changed', 'member-left', 'management-call'], 'the oldest left the ring');
  assert.equal(ring.counters.dropped, 1);
});

test('the ring is bounded in bytes too, and one long message cannot fill it', () => {
  const ring = new EventRing('u', clockAt({ now: 5 }), 10_000, 20_000);
  for (let i = 0; i < 500; i++) ring.record('member-suspected', 'x'.repeat(100));
  assert.ok(ring.bytes <= 20_000, `${ring.bytes} bytes`);
  ring.record('management-call', 'y'.repeat(100_000));
  const e = ring.list(null, 1)[0];
  assert.ok((e?.message.length ?? 0) <= 1024 && e?.message.endsWith('…'));
  assert.ok(ring.bytes <= 20_000);
});

test('the merge keeps each event once, newest first, after since, at most limit', () => {
  const a = new EventRing('a', clockAt({ now: 10 }));
  const b = new EventRing('b', clockAt({ now: 20 }));
  a.record('member-joined', 'one');
  b.record('member-left', 'two');
  b.record('member-left', 'three');
  const la = a.list(null, 10);
  const lb = b.list(null, 10);
  const merged = mergeEvents([la, lb, la], null, 10);
  assert.deepEqual(merged.map((e) => e.message), ['three', 'two', 'one']);
  assert.deepEqual(mergeEvents([la, lb], merged[1]?.id ?? null, 10).map((e) => e.message), ['three'], 'since an id of another member');
  assert.deepEqual(mergeEvents([la, lb], null, 2).map((e) => e.message), ['three', 'two']);
  for (let i = 1; i < merged.length; i++) assert.ok(compareNewestFirst(merged[i - 1] as never, merged[i] as never) < 0);
});

test('the events query: since is an event id, limit 1 to 1000, nothing else', () => {
  assert.deepEqual(parseEventsQuery(null), { since: null, limit: 100 });
  assert.deepEqual(parseEventsQuery('limit=5'), { since: null, limit: 5 });
  const id = '1700000000000-0d6f-0000000007';
  assert.deepEqual(parseEventsQuery(`since=${id}&limit=1000`), { since: id, limit: 1000 });
  for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'limit=-1', 'since=yesterday', 'sort=asc']) {
    assert.throws(() => parseEventsQuery(bad), (e: unknown) => e instanceof GridError && e.code === 'ERR_HTTP_BAD_REQUEST', bad);
  }
});

function gatherer(members: string[]): { svc: ViewsService; sent: { to: string; m: Message }[]; time: FakeTime } {
  const time = new FakeTime();
  const sent: { to: string; m: Message }[] = [];
  const svc = new ViewsService({ selfUuid: 'a', memberUuids: () => members, send: (to, m) => void sent.push({ to, m }) }, time, { count: (q) => ({ self: 'a', q }) }, 2000);
  return { svc, sent, time };
}

test('a gathered view: every member answers, or is missing after the deadline; answers from others are ignored', async () => {
  const { svc, sent, time } = gatherer(['a', 'b', 'c']);
  const p = svc.gather('count', { n: 1 });
  assert.deepEqual(sent.map((s) => [s.to, s.m.kind]), [['b', 'viewAsk'], ['c', 'viewAsk']]);
  const toB = sent[0]?.m as Message;
  // c answers b's call id: not its own, ignored.
  svc.handle({ uuid: 'c', address: 'c:1' }, message('viewAnswer', { ok: true, body: Buffer.from('{"x":1}') }, toB.callId));
  svc.handle({ uuid: 'b', address: 'b:1' }, message('viewAnswer', { ok: true, body: Buffer.from('{"self":"b"}') }, toB.callId));
  time.advance(2000);
  const g = await p;
  assert.deepEqual([...g.parts.keys()], ['a', 'b']);
  assert.deepEqual(g.parts.get('a'), { self: 'a', q: { n: 1 } });
  assert.equal(g.of, 3);
  assert.deepEqual(g.missing, ['c']);
});

test('a member that leaves is not waited for; a member asked answers its part, or why not', async () => {
  const { svc, sent } = gatherer(['a', 'b']);
  const p = svc.gather('count', null);
  svc.memberRemoved('b');
  const g = await p;
  assert.deepEqual(g.missing, ['b']);
  sent.length = 0;
  svc.handle({ uuid: 'b', address: 'b:1' }, message('viewAsk', { view: 'count', query: '{"k":2}' }, 77));
  svc.handle({ uuid: 'b', address: 'b:1' }, message('viewAsk', { view: 'nothing', query: 'null' }, 78));
  const [ok, no] = sent.map((s) => s.m as Message & { kind: 'viewAnswer' });
  assert.equal(ok?.callId, 77);
  assert.deepEqual(JSON.parse(Buffer.from(ok?.body.body as Uint8Array).toString()), { self: 'a', q: { k: 2 } });
  assert.equal(no?.body.ok, false);
  assert.match(Buffer.from(no?.body.body as Uint8Array).toString(), /no view nothing/);
});

test('a member row counts its partitions and heartbeat ages; the view is not safe while a member is missing', async () => {
  const { memberPart, clusterView } = await import('../../src/console/member-part.js');
  const row = memberPart({
    uuid: 'a', master: true, lite: false, cpMember: false, version: '0.1.0', uptimeMs: 1234.4,
    replicas: [['a', 'b'], ['b', 'a'], ['b', 'c'], ['a', null]], members: ['a', 'b', 'c'],
    lastHeard: new Map([['b', 900], ['c', 400]]), nowMs: 1000,
    figures: { member: '[127.0.0.1]:5701', nodeState: 'ACTIVE', clusterState: 'ACTIVE', flat: { clusterSafe: 1, residentMemoryBytes: 5e7, heapUsedBytes: 2e7, eventLoopDelayP99Seconds: 0.0123 } },
    migrationsInProgress: 2,
  });
  assert.deepEqual([row.address, row.ownedPartitions, row.backupPartitions, row.eventLoopDelayP99Ms, row.uptimeMs], ['127.0.0.1:5701', 2, 1, 12.3, 1234]);
  assert.deepEqual(row.heartbeatAgeMs, { b: 100, c: 600 });
  const whole = clusterView('dev', 'a', { parts: new Map([['a', row]]), of: 1, missing: [] });
  assert.deepEqual([whole.clusterSafe, whole.migrationsInProgress, whole.members.length], [true, 2, 1]);
  assert.equal('clusterSafe' in (whole.members[0] as object), false, 'per-member figures of the cluster stay out of the rows');
  const partial = clusterView('dev', 'a', { parts: new Map([['a', row]]), of: 2, missing: ['b'] });
  assert.equal(partial.clusterSafe, false, 'a member that did not answer may be what is unsafe');
});

test('the metrics history: counters become rates over the step, p99 from the buckets, a ring of the last window', async () => {
  const { MetricsHistory, p99FromBuckets } = await import('../../src/console/metrics-history.js');
  const { parseHistoryQuery } = await import('../../src/console/cluster-views.js');
  const bounds = [0.001, 0.01, 0.1];
  const figures = (gets: number, buckets: number[], rss: number) => ({
    flat: { clientCalls: gets * 2, cpCalls: 0, mapEntries: 7, residentMemoryBytes: rss, heapUsedBytes: 1, eventLoopDelayP99Seconds: 0.002 },
    runtime: { latencyBoundsSeconds: bounds, requestKinds: [{ kind: 'map_get', count: gets, cumulativeBuckets: buckets }] },
  });
  const h = new MetricsHistory(2000, 6000);
  assert.equal(h.capacity, 3);
  h.sample(10_000, figures(0, [0, 0, 0, 0], 100));
  assert.deepEqual(h.series('mapGetsPerSecond'), [], 'the first sample only sets the base');
  h.sample(12_000, figures(200, [50, 199, 200, 200], 110));
  assert.deepEqual(h.series('mapGetsPerSecond'), [[12_000, 100]]);
  assert.deepEqual(h.series('clientCallsPerSecond'), [[12_000, 200]]);
  assert.deepEqual(h.series('requestLatencyP99Ms'), [[12_000, 10]], '198 of 200 under 10 ms');
  assert.deepEqual(h.series('rssBytes'), [[12_000, 110]]);
  assert.deepEqual(h.series('eventLoopDelayP99Ms'), [[12_000, 2]]);
  for (let i = 2; i <= 5; i++) h.sample(10_000 + i * 2000, figures(200 * i, [50 * i, 199 * i, 200 * i, 200 * i], 100 + i));
  assert.deepEqual(h.series('rssBytes').map(([t]) => t), [16_000, 18_000, 20_000], 'the oldest left the ring');
  assert.equal(h.bytes, 3 * 8 * 12);
  assert.equal(p99FromBuckets(bounds, [0, 0, 0, 0], [0, 0, 0, 0]), 0, 'no requests, no latency');
  assert.equal(p99FromBuckets(bounds, [0, 0, 0, 0], [0, 0, 0, 10]), 100, 'above every bound: the largest');
  assert.deepEqual(parseHistoryQuery('series=entries'), { series: 'entries', since: null });
  assert.deepEqual(parseHistoryQuery('series=entries&since=18000'), { series: 'entries', since: 18_000 });
  assert.deepEqual(h.series('rssBytes', 18_000), [[20_000, 105]], 'since: only the newer points');
  for (const bad of [null, 'series=nope', 'series=entries&x=1', 'series=entries&series=rssBytes']) {
    assert.throws(() => parseHistoryQuery(bad), /series must be one of mapGetsPerSecond, /, String(bad));
  }
  for (const bad of ['series=entries&since=-1', 'series=entries&since=x', 'series=entries&since=1&since=2']) {
    assert.throws(() => parseHistoryQuery(bad), /since must be a time in ms/, bad);
  }
});

test('the structures view: rates over the last step, parts summed by name, paged by prefix, limit and after', async () => {
  const { StructureRates, structuresPart, mergeStructures, parseStructuresQuery } = await import('../../src/console/structures.js');
  const counts = { reads: 0, puts: 0, offers: 0, polls: 0 };
  const counters = {
    mapReads: () => counts.reads,
    mapPuts: () => counts.puts,
    queueOffers: () => counts.offers,
    queuePolls: () => counts.polls,
    mapExtras: (n: string) => (n === 'orders' ? { heldBytes: 4096, wan: true, persistence: false } : null),
  };
  const held = { maps: [{ name: 'orders', owned: 10, backup: 5 }], queues: [{ name: 'jobs', owned: 3, backup: 0 }] };
  const rates = new StructureRates();
  rates.sample(0, held, counters);
  Object.assign(counts, { reads: 40, puts: 20, offers: 6, polls: 2 });
  rates.sample(2000, held, counters);
  const part = structuresPart(held, counters, rates);
  assert.deepEqual(part.maps, [{ name: 'orders', entries: 10, backupEntries: 5, bytes: 4096, getsPerSecond: 20, putsPerSecond: 10, wan: true, persistence: false }]);
  assert.deepEqual(part.queues, [{ name: 'jobs', size: 3, offersPerSecond: 3, pollsPerSecond: 1 }]);
  const other = { maps: [{ name: 'orders', entries: 5, backupEntries: 10, bytes: 1000, getsPerSecond: 1, putsPerSecond: 0, wan: false, persistence: false }, { name: 'audit', entries: 1, backupEntries: 1, bytes: 10, getsPerSecond: 0, putsPerSecond: 0, wan: false, persistence: true }], queues: [] };
  const all = mergeStructures([part, other], parseStructuresQuery(null));
  assert.deepEqual(all.maps.map((m) => [m.name, m.entries, m.backupEntries, m.bytes, m.getsPerSecond, m.wan]), [['audit', 1, 1, 10, 0, false], ['orders', 15, 15, 5096, 21, true]]);
  assert.deepEqual(all.more, { maps: false, queues: false });
  const first = mergeStructures([part, other], parseStructuresQuery('limit=1'));
  assert.deepEqual([first.maps.map((m) => m.name), first.more.maps], [['audit'], true]);
  const next = mergeStructures([part, other], parseStructuresQuery('limit=1&after=audit'));
  assert.deepEqual([next.maps.map((m) => m.name), next.more.maps], [['orders'], false]);
  assert.deepEqual(mergeStructures([part, other], parseStructuresQuery('prefix=ord')).maps.map((m) => m.name), ['orders']);
  for (const bad of ['limit=0', 'limit=1001', 'sort=name']) assert.throws(() => parseStructuresQuery(bad), /limit must be|unknown parameter/, bad);
});

test('the bound on waiting views counts gathers, not the members each one asks', async () => {
  const { VIEWS_WAITING_MAX } = await import('../../src/console/views-service.js');
  const { svc, sent, time } = gatherer(['a', 'b', 'c']);
  const all: Promise<unknown>[] = [];
  for (let i = 0; i < VIEWS_WAITING_MAX; i++) all.push(svc.gather('count', null));
  assert.equal(sent.length, 2 * VIEWS_WAITING_MAX, 'each asks both other members');
  assert.equal(svc.counters.refused, 0);
  const over = await svc.gather('count', null);
  assert.deepEqual([svc.counters.refused, over.missing], [1, ['b', 'c']]);
  time.advance(2000);
  await Promise.all(all);
});
