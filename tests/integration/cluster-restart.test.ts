// A member killed with kill -9 and restarted at once at the same address and port is a new
// incarnation (cluster.md "Join and membership"), checked with real processes on loopback: three
// members (OS-chosen ports, map and queue backup-count 1) and a seeded keep-alive writer of distinct
// puts, overwrites and queue offers through all three, recording every answer (as in
// cluster-kill-writer.test.ts).
//   a. The MASTER (the oldest member, first in GET /grid/rest/cluster) is killed and restarted at
//      its port as soon as it has exited. The restarted process must never found a cluster of its
//      own ("master of a new cluster" in its stdout, membershipClustersFounded); the survivors must
//      elect the next oldest as master and admit the new incarnation long before the 10 s heartbeat
//      timeout would have removed the old one (the time from the kill until every member lists the
//      new uuid and not the old one is printed; only a generous bound, 9 s, is asserted).
//   b. A NON-master member is killed and restarted: the master removes the old incarnation at once
//      (its log says "restarted with uuid <new>") and admits the new one, again well within 9 s.
//   In both: no member ever lists two entries at one address (every view seen while polling), all
//   three end with the same three members, the writer then also writes through the new incarnation,
//   and once the cluster is safe every acknowledged put, overwrite and offer is there (maps read
//   through a survivor and through the restarted member; queues polled empty through a survivor).
//   c. While a restarted member has not joined, it serves no data: the cluster is switched to
//      FROZEN first, so the master removes the old incarnation but refuses to admit the new one,
//      which keeps the restarted member unjoined for as long as the test needs (deterministic, no
//      race with the join). Meanwhile its map and queue calls answer 503 "cluster not ready" at
//      once, GET /grid/health/ready answers 503, and for longer than the 3 s after which a member
//      that heard nobody would found its own cluster it lists only itself and founds nothing (a
//      refusal counts as an answer). Back to ACTIVE, it is admitted, ready, and reads the data.
// Waits poll conditions with deadlines; no sleep waits for a state, and no tight time is asserted.
import test, { type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { MemberProcess } from '../harness/member-process.js';
import { KeepAliveClient, clusterOf, describeCluster, freePorts, killAll, logTail, metricsOf, startClusterMember, until, waitSettled, type ClusterView } from '../harness/cluster.js';
import { RecordingWriter, drainAndVerifyQueues, verifyMaps } from '../harness/cluster-writer.js';
import { request } from '../harness/raw-http.js';

const SEED = Number(process.env['CLUSTER_SEED'] ?? 20240717);
/** What a member logs when it founds a cluster (membership.ts found()). */
const FOUNDED = /master of a new cluster/;
/** The old rule removed a restarted member only after grid.max.no.heartbeat.seconds (10 s). */
const READMIT_BOUND_MS = 9000;

const addressOf = (port: number): string => `[127.0.0.1]:${port}`;

/** Descriptions of addresses a view lists more than once. */
function doubledAddresses(port: number, v: ClusterView): string[] {
  const seen = new Map<string, number>();
  for (const m of v.members) seen.set(m.address, (seen.get(m.address) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([a]) => `${port} listed ${a} twice: ${v.members.map((m) => `${m.address}/${m.uuid}`).join(', ')}`);
}

/** The uuid a member reports for itself. */
async function localUuid(port: number): Promise<string> {
  const me = (await clusterOf(port)).members.find((m) => m.localMember);
  assert.ok(me !== undefined, `${port} lists itself`);
  return me.uuid;
}

/**
 * The views of `ports` once every one lists three members with `newUuid` and without `oldUuid`,
 * else null (for `until`). Every view seen is checked for doubled addresses into `doubled`.
 */
async function readmitted(ports: readonly number[], oldUuid: string, newUuid: string, doubled: string[]): Promise<ClusterView[] | null> {
  const views: ClusterView[] = [];
  for (const p of ports) {
    const v = await clusterOf(p);
    doubled.push(...doubledAddresses(p, v));
    views.push(v);
  }
  const done = views.every((v) => v.members.length === 3 && v.members.some((m) => m.uuid === newUuid) && !v.members.some((m) => m.uuid === oldUuid));
  return done ? views : null;
}

async function waitReadmitted(ports: readonly number[], oldUuid: string, newUuid: string, doubled: string[], deadlineMs: number): Promise<ClusterView[]> {
  try {
    return await until(`every member to list the new incarnation ${newUuid} and not ${oldUuid}`, deadlineMs, () => readmitted(ports, oldUuid, newUuid, doubled));
  } catch (e) {
    throw new Error(`${(e as Error).message}; now: ${await describeCluster(ports)}`);
  }
}

type Victim = 'the master' | 'a non-master member';

async function restartUnderWriter(t: TestContext, which: Victim, seed: number): Promise<void> {
  const ports = await freePorts(3);
  const members: MemberProcess[] = [];
  /** Every process started, the killed one included (for logs and clean-up). */
  const started: MemberProcess[] = [];
  let writer: RecordingWriter | null = null;
  let ok = false;
  // The restart rule is what this test is about: the refusal detector (cluster-refusal.test.ts)
  // would otherwise remove the old incarnation about 200 ms after the kill, before the restarted
  // process (about 250 ms to start) asks to join, and the rule would never run. With 50 faults it
  // needs about 3.7 s, so the new incarnation arrives first.
  const options = { properties: { 'grid.connection.monitor.max.faults': 50 } };
  try {
    for (const p of ports) {
      const m = await startClusterMember(p, ports, options);
      members.push(m);
      started.push(m);
    }
    await waitSettled(ports, 3, 30_000);
    const before = await clusterOf(ports[0]!);
    const masterIndex = ports.findIndex((p) => addressOf(p) === before.members[0]!.address);
    assert.ok(masterIndex >= 0, `the master ${before.members[0]!.address} is one of ours`);
    const victimIndex = which === 'the master' ? masterIndex : (masterIndex + 1) % 3;
    const victim = members[victimIndex]!;
    const port = victim.port;
    const oldUuid = before.members.find((m) => m.address === addressOf(port))!.uuid;
    // The master afterwards: the next oldest when the master restarts, else the same one.
    const expectedMaster = which === 'the master' ? before.members[1]! : before.members[0]!;
    const survivors = ports.filter((_, i) => i !== victimIndex);
    const survivorMembers = members.filter((_, i) => i !== victimIndex);

    writer = new RecordingWriter({
      ports,
      loops: 6,
      seed,
      map: 'orders',
      queues: Array.from({ length: 8 }, (_, i) => `jobs-${i}`),
      hotKeysPerLoop: 12,
      hotShare: 0.3,
      offerShare: 0.2,
    });
    const w = writer;
    w.start();
    await until('500 acknowledged writes before the kill', 30_000, async () => (w.acked >= 500 ? true : null));

    const ackedBeforeKill = w.acked;
    const killAt = Date.now();
    const killAtWriterMs = w.elapsedMs();
    victim.child.kill('SIGKILL');
    await victim.waitForExit(5000);
    w.markDead(port);
    const restarted = await startClusterMember(port, ports, options);
    started.push(restarted);
    members[victimIndex] = restarted;
    const restartMs = Date.now() - killAt;
    const newUuid = await localUuid(port);
    assert.notEqual(newUuid, oldUuid, 'a restarted process has a new uuid');

    const doubled: string[] = [];
    await waitReadmitted(ports, oldUuid, newUuid, doubled, 30_000);
    const readmitMs = Date.now() - killAt;
    t.diagnostic(`${which} (${port}): restarted ${restartMs} ms after the kill; every member listed the new incarnation ${readmitMs} ms after the kill`);

    // Writes through the new incarnation too, for a moment.
    const aliveAgainMs = w.elapsedMs();
    w.markAlive(port);
    const ackedAtReadmit = w.acked;
    try {
      await until('300 more acknowledged writes after the re-admission', 30_000, async () => (w.acked >= ackedAtReadmit + 300 ? true : null));
    } catch (e) {
      // A stall: say what the writer was waiting for (requests in flight, the last failures).
      const now = w.elapsedMs();
      const waiting = w.inFlight().map((r) => `${r.what} via ${r.port} for ${now - r.sentMs} ms`);
      const lastFailures = w.failures.slice(-10).map((f) => `${f.what} via ${f.port}: ${f.status} ${f.detail}`);
      // And what each member's migrations, replication and invocations were doing (seen stalled
      // twice in CI, never reproduced: this is the clue to keep).
      const figures: string[] = [];
      for (const p of ports) {
        try {
          const m = await metricsOf(p);
          const picked = Object.entries(m).filter(([k]) => /migrat|held|hold|backup|resync|transfer|snapshot|invo|retr|forward|promot/i.test(k));
          figures.push(`${p}: ${picked.map(([k, v]) => `${k}=${v}`).join(' ')}`);
        } catch (err) {
          figures.push(`${p}: metrics unavailable (${(err as Error).message})`);
        }
      }
      const cluster = await describeCluster(ports).catch(() => 'cluster unavailable');
      throw new Error(`${(e as Error).message}; acked ${w.acked} (${ackedAtReadmit} at re-admission); in flight: ${waiting.join('; ') || 'none'}; last failures: ${lastFailures.join('; ') || 'none'}; members: ${figures.join(' | ')}; ${cluster}`);
    }
    await w.stop();
    await waitSettled(ports, 3, 30_000);
    t.diagnostic(`acked before kill ${ackedBeforeKill}, at re-admission ${ackedAtReadmit}, total ${w.acked}/${w.attempted}; outcomes ${JSON.stringify(w.summary())}`);

    // The restarted process joined the existing cluster and never founded its own.
    assert.doesNotMatch(restarted.stdout(), FOUNDED, 'the restarted member founded a cluster of its own');
    assert.equal((await metricsOf(port))['membershipClustersFounded'], 0, 'membershipClustersFounded on the restarted member');

    // One cluster of three: the same list everywhere, the old uuid gone, the new one last (youngest),
    // the expected master first, one entry per address, each member "local" once.
    const views = await Promise.all(ports.map((p) => clusterOf(p)));
    const ids = views[0]!.members.map((m) => m.uuid);
    for (const [i, v] of views.entries()) {
      assert.deepEqual(v.members.map((m) => m.uuid), ids, `${ports[i]} lists the same members in the same order`);
      assert.deepEqual(doubledAddresses(ports[i]!, v), []);
      assert.equal(v.members.find((m) => m.localMember)?.address, addressOf(ports[i]!));
    }
    assert.equal(ids.length, 3);
    assert.ok(!ids.includes(oldUuid), 'the old incarnation is gone');
    assert.equal(ids[2], newUuid, 'the new incarnation is listed, as the youngest member');
    assert.equal(ids[0], expectedMaster.uuid, `the master is ${expectedMaster.address}`);
    assert.deepEqual(doubled.slice(0, 5), [], `${doubled.length} views listed two members at one address`);

    if (which === 'a non-master member') {
      // The master saw the new uuid at a listed address and removed the old one at once.
      const master = survivorMembers.find((m) => addressOf(m.port) === expectedMaster.address)!;
      assert.match(master.stdout(), new RegExp(`member at \\S+:${port} restarted with uuid ${newUuid}; removing ${oldUuid}`));
    } else {
      // At least one survivor recognised its restarted master by the join request of the new uuid.
      const seen = survivorMembers.filter((m) => m.stdout().includes(`restarted (new uuid ${newUuid})`));
      assert.ok(seen.length >= 1, 'no survivor logged that the master restarted');
    }
    const detected = await Promise.all(survivors.map(async (p) => (await metricsOf(p))['membershipRestartsDetected'] ?? 0));
    assert.ok(detected.some((n) => n >= 1), `membershipRestartsDetected on the survivors: ${detected.join(', ')}`);

    // Re-admitted long before the heartbeat timeout would have removed the old incarnation.
    assert.ok(readmitMs < READMIT_BOUND_MS, `the new incarnation was listed everywhere ${readmitMs} ms after the kill (bound ${READMIT_BOUND_MS} ms)`);

    // Requests that may fail: those sent to the port between the kill and the re-admission (the old
    // incarnation died under them: socket error or 503), and queue offers answered 503 after the
    // kill (their owner died before answering: ERR_CLUSTER_INDETERMINATE). Everything else is 200.
    const unexpected = w.failures.filter(
      (f) => !(f.port === port && f.sentMs < aliveAgainMs && (f.status === 0 || f.status === 503)) && !(f.status === 503 && f.what.startsWith('offer') && f.atMs >= killAtWriterMs),
    );
    for (const f of w.failures.slice(0, 10)) t.diagnostic(`not acknowledged: ${JSON.stringify(f)}`);
    assert.deepEqual(unexpected.slice(0, 20), [], `${unexpected.length} unexpected failures`);

    // Nothing acknowledged is lost: read through a survivor and through the new incarnation.
    for (const reader of [survivors[0]!, port]) {
      const maps = await verifyMaps(reader, 'orders', w);
      t.diagnostic(`checked ${maps.checked} keys through ${reader}`);
      assert.deepEqual(maps.problems.slice(0, 20), [], `${maps.problems.length} keys lost or wrong through ${reader} (seed ${seed})`);
    }
    const queues = await drainAndVerifyQueues(survivors[0]!, w);
    t.diagnostic(`polled ${queues.polled} items; ${queues.ackedOffers} acknowledged offers`);
    assert.deepEqual(queues.missing.slice(0, 20), [], `${queues.missing.length} acknowledged offers lost (seed ${seed})`);
    assert.deepEqual(queues.duplicates, [], 'items polled twice');
    assert.deepEqual(queues.unknown, [], 'items never offered (or offered to another queue)');
    assert.deepEqual(queues.outOfOrder, [], 'acknowledged items of one producer out of order');
    ok = true;
  } finally {
    if (!ok) for (const m of started) console.error(logTail(m, 60));
    await killAll(started);
    if (writer !== null) await writer.stop().catch(() => undefined);
  }
}

test(`kill -9 of the master and an immediate restart at its port: a successor is elected and the new incarnation admitted, nothing acknowledged lost (seed=${SEED})`, { timeout: 120_000 }, (t) =>
  restartUnderWriter(t, 'the master', SEED),
);

test(`kill -9 of a non-master member and an immediate restart at its port: the master replaces the old incarnation at once, nothing acknowledged lost (seed=${SEED + 1})`, { timeout: 120_000 }, (t) =>
  restartUnderWriter(t, 'a non-master member', SEED + 1),
);

test('a restarted member that has not joined yet serves no data (503) and is not ready, and founds no cluster of its own', { timeout: 120_000 }, async (t) => {
  const ports = await freePorts(3);
  const started: MemberProcess[] = [];
  let ok = false;
  try {
    for (const p of ports) started.push(await startClusterMember(p, ports));
    await waitSettled(ports, 3, 30_000);
    const before = await clusterOf(ports[0]!);
    const masterPort = ports.find((p) => addressOf(p) === before.members[0]!.address)!;
    const master = started[ports.indexOf(masterPort)]!;
    const victimIndex = (ports.indexOf(masterPort) + 1) % 3;
    const port = ports[victimIndex]!;
    const oldUuid = before.members.find((m) => m.address === addressOf(port))!.uuid;
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    for (const k of keys) assert.equal((await request(masterPort, 'POST', `/grid/rest/maps/m/${k}`, { body: `value-${k}` })).status, 200);

    // FROZEN: the master still removes a restarted member's old incarnation, but admits nobody.
    const frozen = await request(masterPort, 'POST', '/grid/rest/management/cluster/changeState', { body: 'dev&&frozen' });
    assert.equal(frozen.status, 200, frozen.text());
    assert.match(frozen.text(), /"success"/);

    started[victimIndex]!.child.kill('SIGKILL');
    await started[victimIndex]!.waitForExit(5000);
    const restartedAt = Date.now();
    const restarted = await startClusterMember(port, ports);
    started.push(restarted);
    const newUuid = await localUuid(port);
    // Refused by the master: from here on it stays unjoined until the cluster is ACTIVE again.
    await restarted.waitForOutput(/join refused by \S+: the cluster is FROZEN/, 15_000);
    // The old incarnation is removed either by the restart rule (the new one asked to join first) or
    // by the refusal detector (its dials were refused before the new process listened): which one
    // wins is a race of about 200 ms against the restart's start-up, and this test is about what the
    // new incarnation serves, not about which rule removed the old one. Either way it is removed.
    await master.waitForOutput(new RegExp(`removed [^\\n]*${oldUuid}[^\\n]* \\((restarted|reconnects refused|no heartbeat)\\)`), 10_000);

    assert.equal((await request(port, 'GET', '/grid/health/ready')).status, 503, 'ready before joining');
    const view = await clusterOf(port);
    assert.deepEqual(view.members.map((m) => m.uuid), [newUuid], 'an unjoined member lists only itself');

    // Data calls answer at once (bounded by 5 s here; a call held until it joins would time out).
    const client = new KeepAliveClient(port, 5000);
    try {
      const calls: [string, string, string | undefined][] = [
        ['GET', '/grid/rest/maps/m/key-0', undefined],
        ['POST', '/grid/rest/maps/m/new-key', 'v'],
        ['DELETE', '/grid/rest/maps/m/key-1', undefined],
        ['POST', '/grid/rest/queues/q', 'item'],
        ['DELETE', '/grid/rest/queues/q/0', undefined],
        ['GET', '/grid/rest/queues/q/size', undefined],
      ];
      for (const [method, path, body] of calls) {
        let answer: string;
        try {
          const r = await client.request(method, path, body === undefined ? {} : { body });
          answer = `${r.status} ${r.headers['grid-error'] ?? ''}`;
        } catch (e) {
          answer = `no answer: ${(e as Error).message}`;
        }
        assert.match(answer, /^503 cluster not ready/, `${method} ${path} on a member that has not joined`);
      }
    } finally {
      client.close();
    }

    // It keeps asking and never founds a cluster of its own, beyond the 3 s after which a member
    // that heard nobody would (claimAfterMs): the master's refusal counts as an answer. This watches
    // a state for a while (polling), it does not wait for one.
    const watchUntil = restartedAt + 4500;
    let samples = 0;
    while (Date.now() < watchUntil) {
      assert.equal((await request(port, 'GET', '/grid/health/ready')).status, 503, 'ready while refused');
      assert.deepEqual((await clusterOf(port)).members.map((m) => m.uuid), [newUuid], 'lists only itself while refused');
      assert.doesNotMatch(restarted.stdout(), FOUNDED, 'founded a cluster of its own while refused');
      samples++;
      await new Promise((r) => setTimeout(r, 200));
    }
    t.diagnostic(`unjoined and not ready in ${samples} samples over ${Date.now() - restartedAt} ms after the restart`);

    const active = await request(masterPort, 'POST', '/grid/rest/management/cluster/changeState', { body: 'dev&&active' });
    assert.equal(active.status, 200, active.text());
    const doubled: string[] = [];
    await waitReadmitted(ports, oldUuid, newUuid, doubled, 30_000);
    assert.deepEqual(doubled.slice(0, 5), [], 'views listed two members at one address');
    await until('the restarted member to be ready', 15_000, async () => ((await request(port, 'GET', '/grid/health/ready')).status === 200 ? true : null));
    for (const k of keys) assert.equal((await request(port, 'GET', `/grid/rest/maps/m/${k}`)).text(), `value-${k}`, `${k} through the restarted member`);
    assert.doesNotMatch(restarted.stdout(), FOUNDED);
    assert.equal((await metricsOf(port))['membershipClustersFounded'], 0);
    ok = true;
  } finally {
    if (!ok) for (const m of started) console.error(logTail(m, 60));
    await killAll(started);
  }
});
