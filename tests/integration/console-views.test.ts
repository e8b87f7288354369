// The console's cluster views on a real 3-member cluster (spec/console.md "The views it reads",
// docs/rest.md "Cluster views"): the event timeline merged from every member (joins as the master
// admitted them, a management call with who made it, a kill -9 seen as suspected and then removed,
// `since` and `limit`, "k of n" when a member does not answer), and the partition table as the
// master holds it. Heartbeats 1 s, suspicion after 3 s; every wait is bounded.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePorts, killAll, startClusterMembers, until, waitSettled } from '../harness/cluster.js';
import type { MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';

interface Ev { id: string; timeMs: number; member: string; kind: string; message: string; actor: string | null }
interface Events { answered: number; of: number; missing: string[]; events: Ev[] }

const events = async (port: number, query = ''): Promise<Events> => {
  const r = await request(port, 'GET', `/grid/rest/events${query}`);
  assert.equal(r.status, 200, r.text());
  return r.json() as Events;
};

describe('cluster views', () => {
  let members: MemberProcess[] = [];
  after(() => killAll(members));

  test('the timeline and the partition table, gathered from every member', async () => {
    const ports = await freePorts(3);
    members = await startClusterMembers(ports, { properties: { 'grid.max.no.heartbeat.seconds': 3 } });
    await waitSettled(ports, 3, 30_000);
    const [a, b, c] = ports as [number, number, number];
    const cluster = (await request(a, 'GET', '/grid/rest/cluster')).json() as { members: { address: string; uuid: string }[] };
    const uuidOf = (port: number): string => cluster.members.find((m) => m.address.endsWith(`:${port}`))?.uuid as string;

    // Joins: recorded once, by the master that admitted them, and seen through any member.
    const first = await events(b);
    assert.equal(first.answered, 3);
    assert.equal(first.of, 3);
    assert.deepEqual(first.missing, []);
    const joined = first.events.filter((e) => e.kind === 'member-joined').map((e) => e.member).sort();
    assert.deepEqual(joined, [uuidOf(b), uuidOf(c)].sort(), JSON.stringify(first.events));
    for (let i = 1; i < first.events.length; i++) assert.ok((first.events[i - 1] as Ev).timeMs >= (first.events[i] as Ev).timeMs, 'newest first');
    // The moves that spread the partitions over the three members: a round started and finished, by the master.
    const started = first.events.find((e) => e.kind === 'migration-started');
    const finished = first.events.find((e) => e.kind === 'migration-finished');
    assert.ok(started !== undefined && finished !== undefined, JSON.stringify(first.events.map((e) => e.kind)));
    assert.equal(finished.member, uuidOf(a));
    assert.ok(finished.timeMs >= started.timeMs);
    assert.match(finished.message, /migrations finished: \d+ move\(s\) committed/);

    // A management call through c: on the timeline with its answer and who made it.
    const set = await request(c, 'POST', '/grid/rest/log-level', { body: 'dev&&FINE' });
    assert.equal(set.status, 200, set.text());
    const afterCall = await events(a, `?since=${encodeURIComponent(first.events[0]?.id as string)}`);
    const call = afterCall.events.find((e) => e.kind === 'management-call');
    assert.ok(call !== undefined, JSON.stringify(afterCall));
    assert.equal(call.member, uuidOf(c));
    assert.match(call.message, /POST \/grid\/rest\/log-level: 200/);
    assert.match(call.actor ?? '', /from 127\.0\.0\.1/);
    assert.ok(afterCall.events.every((e) => !first.events.some((f) => f.id === e.id)), 'since: only newer events');
    assert.equal((await events(a, '?limit=1')).events.length, 1);
    for (const bad of ['?limit=0', '?since=x', '?other=1']) assert.equal((await request(a, 'GET', `/grid/rest/events${bad}`)).status, 400, bad);

    // The partition table as the master holds it: 271 partitions, owner and backup on members.
    const pr = await request(b, 'GET', '/grid/rest/partitions');
    assert.equal(pr.status, 200, pr.text());
    const parts = pr.json() as { version: number; from: string; partitions: { id: number; replicas: (string | null)[]; migrating: boolean }[]; migrations: { planned: number; completed: number } };
    assert.equal(parts.partitions.length, 271);
    assert.equal(parts.from, uuidOf(a), 'the master answered');
    const uuids = new Set(cluster.members.map((m) => m.uuid));
    for (const p of parts.partitions) {
      assert.ok(uuids.has(p.replicas[0] as string) && uuids.has(p.replicas[1] as string) && p.replicas[0] !== p.replicas[1], JSON.stringify(p));
    }
    assert.equal(parts.migrations.planned, 0);
    assert.ok(parts.migrations.completed > 0);

    // Every member's row through a non-master: partitions add up, heartbeats are fresh, the process is measured.
    interface Row { uuid: string; address: string; master: boolean; state: string; ownedPartitions: number; backupPartitions: number; rssBytes: number; heapUsedBytes: number; eventLoopDelayP99Ms: number; uptimeMs: number; heartbeatAgeMs: Record<string, number> }
    interface View { clusterName: string; answered: number; of: number; missing: string[]; members: Row[]; clusterState: string; clusterSafe: boolean; migrationsInProgress: number }
    const view = await until('a cluster-safe view', 20_000, async () => {
      const v = (await request(b, 'GET', '/grid/rest/cluster/view')).json() as View;
      return v.clusterSafe ? v : null;
    });
    assert.equal(view.clusterName, 'dev');
    assert.deepEqual([view.answered, view.of, view.missing], [3, 3, []]);
    assert.deepEqual(view.members.map((m) => m.uuid), cluster.members.map((m) => m.uuid), 'in member-list order');
    assert.deepEqual(view.members.map((m) => m.master), [true, false, false]);
    assert.equal(view.members.reduce((n, m) => n + m.ownedPartitions, 0), 271);
    assert.equal(view.members.reduce((n, m) => n + m.backupPartitions, 0), 271);
    for (const m of view.members) {
      assert.equal(m.state, 'ACTIVE');
      assert.ok(m.rssBytes > 0 && m.heapUsedBytes > 0 && m.uptimeMs > 0, JSON.stringify(m));
      assert.deepEqual(Object.keys(m.heartbeatAgeMs).sort(), view.members.filter((x) => x.uuid !== m.uuid).map((x) => x.uuid).sort());
      for (const age of Object.values(m.heartbeatAgeMs)) assert.ok(Number.isInteger(age) && age >= 0, `heartbeat age ${age} ms`);
    }
    assert.deepEqual([view.clusterState, view.migrationsInProgress], ['ACTIVE', 0]);

    // The charts' history: puts through every member show as a rate on the members that served them.
    for (let i = 0; i < 60; i++) assert.equal((await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/m/k${i}`, { body: 'v' })).status, 200);
    const history = await until('put rates in the history', 20_000, async () => {
      const r = await request(a, 'GET', '/grid/rest/metrics/history?series=mapPutsPerSecond');
      assert.equal(r.status, 200, r.text());
      const h = r.json() as { stepMs: number; answered: number; members: Record<string, [number, number][]> };
      const served = Object.values(h.members).filter((points) => points.some(([, v]) => v > 0)).length;
      return served === 3 ? h : null;
    });
    assert.equal(history.stepMs, 2000);
    assert.deepEqual(Object.keys(history.members).sort(), [...uuids].sort());
    // Maps and queues: entries and backups summed over the members, rates of the last step, paged.
    for (let i = 0; i < 5; i++) assert.equal((await request(c, 'POST', '/grid/rest/queues/jobs', { body: `j${i}` })).status, 200);
    interface Structures { answered: number; of: number; maps: { name: string; entries: number; backupEntries: number; bytes: number; getsPerSecond: number; putsPerSecond: number }[]; queues: { name: string; size: number; offersPerSecond: number }[]; more: { maps: boolean; queues: boolean } }
    const st = (await request(b, 'GET', '/grid/rest/structures')).json() as Structures;
    const m = st.maps.find((x) => x.name === 'm');
    assert.deepEqual([st.answered, st.of, m?.entries, m?.backupEntries], [3, 3, 60, 60], JSON.stringify(st));
    assert.ok((m?.bytes ?? 0) > 60 * 64, 'memory held by the map');
    assert.deepEqual(st.queues.find((q) => q.name === 'jobs')?.size, 5);
    // Rates: reads and puts of a map under steady load show on the view within a few steps.
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/busy/k${i % 50}`, { body: 'v' });
        await request(ports[i % 3] as number, 'GET', `/grid/rest/maps/busy/k${i % 50}`);
      }
    })();
    try {
      await until('rates of the busy map', 20_000, async () => {
        const busy = ((await request(b, 'GET', '/grid/rest/structures?prefix=busy')).json() as Structures).maps[0];
        return busy !== undefined && busy.putsPerSecond > 0 && busy.getsPerSecond > 0 ? busy : null;
      });
    } finally {
      loading = false;
      await load;
    }
    const paged = (await request(b, 'GET', '/grid/rest/structures?limit=1')).json() as Structures;
    assert.deepEqual([paged.maps.map((x) => x.name), paged.more.maps], [['busy'], true]);
    const rest = (await request(b, 'GET', '/grid/rest/structures?limit=1&after=busy')).json() as Structures;
    assert.deepEqual([rest.maps.map((x) => x.name), rest.more.maps], [['m'], false]);
    assert.equal((await request(b, 'GET', '/grid/rest/structures?limit=0')).status, 400);

    const bad = await request(a, 'GET', '/grid/rest/metrics/history?series=nope');
    assert.equal(bad.status, 400);
    assert.match(bad.text(), /mapGetsPerSecond/);

    // c stops (SIGSTOP): the views answer after their 2 s deadline, without it, and name it.
    const gone = uuidOf(c);
    members[2]?.child.kill('SIGSTOP');
    const partial = await events(a);
    assert.equal(partial.answered, 2);
    assert.equal(partial.of, 3);
    assert.deepEqual(partial.missing, [gone]);
    const partialView = (await request(a, 'GET', '/grid/rest/cluster/view')).json() as View;
    assert.deepEqual([partialView.answered, partialView.of, partialView.missing, partialView.clusterSafe], [2, 3, [gone], false]);
    // kill -9 of c: suspected, then removed by the master.
    members[2]?.child.kill('SIGKILL');
    const left = await until('c removed on the timeline', 30_000, async () => {
      const e = await events(a);
      return e.events.some((x) => x.kind === 'member-left' && x.member === gone) ? e : null;
    });
    assert.ok(left.events.some((x) => x.kind === 'member-suspected' && x.member === gone), JSON.stringify(left.events.slice(0, 6)));
    assert.match(left.events.find((x) => x.kind === 'member-left' && x.member === gone)?.message ?? '', /removed by the master/);
    assert.equal(left.of, 2, 'asked of the members of the list');
  });
});
