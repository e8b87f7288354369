// A lite member (`<lite-member enabled="true"/>`, cluster.md "Lite members own no partitions; they
// serve REST by forwarding") joins a real two-member cluster:
//   - every member's /grid/rest/cluster lists three members, the lite one with "liteMember":true
//     and the data members with false;
//   - the cluster stays safe with no migration, the lite member owns no partition and holds no entry
//     (GET /grid/rest/metrics ownedPartitions, mapEntries), the data members still own all 271;
//   - map and queue calls THROUGH the lite member work: its writes read back through the data
//     members, their writes read back through it, an offer through it is polled through a data
//     member and the other way round;
//   - kill -9 of the lite member under a running writer (keep-alive loops over all three members)
//     loses nothing: the data members list two members within the spec's 15 s, stay safe, every
//     request through them answered 200, every acknowledged key and offer is there exactly once.
// Deadlines only bound the waits; no time is asserted.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { MemberProcess } from '../harness/member-process.js';
import { clusterOf, freePorts, killAll, logTail, metricsOf, sizeIs, startClusterMember, until, waitSettled } from '../harness/cluster.js';
import { RecordingWriter, drainAndVerifyQueues, verifyMaps } from '../harness/cluster-writer.js';
import { request } from '../harness/raw-http.js';

const SEED = Number(process.env['CLUSTER_SEED'] ?? 777);

test(`a lite member forwards, owns nothing, and its kill -9 loses nothing (seed=${SEED})`, { timeout: 150_000 }, async (t) => {
  const ports = await freePorts(3);
  const [a, b, lite] = ports as [number, number, number];
  const members: MemberProcess[] = [];
  let writer: RecordingWriter | null = null;
  let ok = false;
  try {
    members.push(await startClusterMember(a, ports), await startClusterMember(b, ports));
    await waitSettled([a, b], 2, 30_000);
    const ownedBefore = await Promise.all([a, b].map(async (p) => (await metricsOf(p))['ownedPartitions']));
    members.push(await startClusterMember(lite, ports, { lite: true }));
    await waitSettled(ports, 3, 30_000);

    // The member list, as every member sees it.
    const views = await Promise.all(ports.map((p) => clusterOf(p)));
    for (const [i, v] of views.entries()) {
      assert.deepEqual(v.members.map((m) => m.uuid), views[0]!.members.map((m) => m.uuid), 'the same members in the same order everywhere');
      const byAddress = new Map(v.members.map((m) => [m.address, m]));
      assert.equal(byAddress.get(`[127.0.0.1]:${lite}`)?.liteMember, true, `member ${ports[i]} shows the lite member as lite`);
      assert.equal(byAddress.get(`[127.0.0.1]:${a}`)?.liteMember, false);
      assert.equal(byAddress.get(`[127.0.0.1]:${b}`)?.liteMember, false);
      assert.equal(v.members.find((m) => m.localMember)?.address, `[127.0.0.1]:${ports[i]}`);
    }
    assert.notEqual(views[0]!.members[0]!.address, `[127.0.0.1]:${lite}`, 'the lite member, the youngest, is not the master');

    // Writes and reads through the lite member (it forwards; it stores nothing).
    const keys = Array.from({ length: 200 }, (_, i) => `via-lite-${i}`);
    for (const k of keys) {
      const r = await request(lite, 'POST', `/grid/rest/maps/m/${k}`, { body: `lite-${k}`, headers: { 'Content-Type': 'text/plain' } });
      assert.equal(r.status, 200, `put ${k} through the lite member: ${r.statusLine} ${r.headers['grid-error'] ?? ''}`);
    }
    for (const k of keys.slice(0, 50)) assert.equal((await request(a, 'POST', `/grid/rest/maps/m/${k}-a`, { body: `a-${k}` })).status, 200);
    for (const p of ports) {
      for (const k of keys) {
        const r = await request(p, 'GET', `/grid/rest/maps/m/${k}`);
        assert.equal(r.status, 200, `${k} through ${p}`);
        assert.equal(r.text(), `lite-${k}`, `${k} through ${p}`);
        assert.equal(r.headers['content-type'], 'text/plain');
      }
    }
    for (const k of keys.slice(0, 50)) assert.equal((await request(lite, 'GET', `/grid/rest/maps/m/${k}-a`)).text(), `a-${k}`, `${k}-a through the lite member`);
    assert.equal((await request(lite, 'DELETE', `/grid/rest/maps/m/${keys[0]}`)).status, 200);
    assert.equal((await request(b, 'GET', `/grid/rest/maps/m/${keys[0]}`)).status, 204, 'a delete through the lite member took effect');
    assert.equal((await request(lite, 'POST', `/grid/rest/maps/m/${keys[0]}`, { body: `lite-${keys[0]}`, headers: { 'Content-Type': 'text/plain' } })).status, 200);

    assert.equal((await request(lite, 'POST', '/grid/rest/queues/tasks', { body: 'from-lite' })).status, 200);
    assert.equal((await request(a, 'POST', '/grid/rest/queues/tasks', { body: 'from-a' })).status, 200);
    assert.equal((await request(lite, 'GET', '/grid/rest/queues/tasks/size')).text(), '2');
    const p1 = await request(b, 'DELETE', '/grid/rest/queues/tasks/0');
    assert.equal(p1.status, 200);
    assert.equal(p1.text(), 'from-lite', 'the offer through the lite member, polled through a data member');
    const p2 = await request(lite, 'DELETE', '/grid/rest/queues/tasks/0');
    assert.equal(p2.status, 200);
    assert.equal(p2.text(), 'from-a', 'the offer through a data member, polled through the lite member');
    assert.equal((await request(lite, 'DELETE', '/grid/rest/queues/tasks/0')).status, 204);

    // The lite member owns and holds nothing; the data members kept the whole table.
    const liteMetrics = await metricsOf(lite);
    assert.equal(liteMetrics['ownedPartitions'], 0, 'the lite member owns no partition');
    assert.equal(liteMetrics['mapEntries'], 0, 'the lite member holds no map entry');
    const ownedAfter = await Promise.all([a, b].map(async (p) => (await metricsOf(p))['ownedPartitions']));
    assert.deepEqual(ownedAfter, ownedBefore, 'the lite member joining moved no partition');
    assert.equal((ownedAfter[0] ?? 0) + (ownedAfter[1] ?? 0), 271);
    for (const p of ports) assert.equal((await request(p, 'GET', '/grid/health/cluster-safe')).status, 200, `cluster-safe on ${p}`);

    // kill -9 of the lite member under a running writer.
    writer = new RecordingWriter({
      ports,
      loops: 4,
      seed: SEED,
      map: 'orders',
      queues: Array.from({ length: 6 }, (_, i) => `jobs-${i}`),
      hotKeysPerLoop: 16,
      hotShare: 0.3,
      offerShare: 0.2,
    });
    const w = writer;
    w.start();
    await until('1000 acknowledged writes before the kill', 30_000, async () => (w.acked >= 1000 ? true : null));
    const killAt = w.elapsedMs();
    // The writer learns of the death only once the process is gone: requests sent meanwhile fail.
    members[2]!.child.kill('SIGKILL');
    await members[2]!.waitForExit(5000);
    w.markDead(lite);
    await until('the data members to list two members', 15_000, () => sizeIs([a, b], 2));
    const removedAt = w.elapsedMs();
    const ackedAtRemoval = w.acked;
    await until('1 s and 500 more acknowledged writes after the removal', 20_000, async () => (w.acked >= ackedAtRemoval + 500 && w.elapsedMs() >= removedAt + 1000 ? true : null));
    await w.stop();
    await waitSettled([a, b], 2, 30_000);
    t.diagnostic(`kill at ${killAt} ms, removal seen at ${removedAt} ms; acked ${w.acked}/${w.attempted}; outcomes ${JSON.stringify(w.summary())}`);
    for (const f of w.failures.slice(0, 20)) t.diagnostic(`not acknowledged: ${JSON.stringify(f)}`);

    const dataFailures = w.failures.filter((f) => f.port !== lite);
    assert.deepEqual(dataFailures.slice(0, 20), [], `${dataFailures.length} requests through the data members failed while the lite member died`);
    assert.deepEqual(w.failures.filter((f) => f.status !== 0), [], 'the lite member answered something other than 200 before it died');
    for (const p of [a, b]) {
      const maps = await verifyMaps(p, 'orders', w);
      assert.deepEqual(maps.problems.slice(0, 20), [], `${maps.problems.length} keys lost or wrong through ${p} (seed ${SEED})`);
    }
    for (const k of keys) assert.equal((await request(a, 'GET', `/grid/rest/maps/m/${k}`)).text(), `lite-${k}`, `${k} after the kill`);
    const queues = await drainAndVerifyQueues(b, w);
    t.diagnostic(`polled ${queues.polled} items; ${queues.ackedOffers} acknowledged offers`);
    assert.deepEqual(queues.missing.slice(0, 20), [], `${queues.missing.length} acknowledged offers lost (seed ${SEED})`);
    assert.deepEqual(queues.duplicates, [], 'items polled twice');
    assert.deepEqual(queues.unknown, [], 'items never offered');
    assert.deepEqual(queues.outOfOrder, [], 'acknowledged items of one producer out of order');
    const ownedEnd = await Promise.all([a, b].map(async (p) => (await metricsOf(p))['ownedPartitions']));
    assert.deepEqual(ownedEnd, ownedBefore, 'the lite member leaving moved no partition');
    ok = true;
  } finally {
    if (!ok) for (const m of members) console.error(logTail(m, 60));
    await killAll(members);
    if (writer !== null) await writer.stop().catch(() => undefined);
  }
});
