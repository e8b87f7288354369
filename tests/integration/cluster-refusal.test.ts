// Refusal-based failure detection with real processes (issue #11): a kill -9 closes the member's
// sockets and its port refuses every reconnect, so the survivors remove it long before the
// heartbeat timeout (10 s); a SIGSTOP keeps its sockets open and refuses nothing, so a stop shorter
// than the timeout removes nobody.
// - kill -9 of a non-master member of three (map backup-count 1) under a seeded writer through all
//   of them: the survivors list two members before 5 s, every write through a survivor that was
//   waiting on the dead member is answered before 5 s, and no acknowledged write is lost.
// - SIGSTOP of a non-master member for 4 s, then SIGCONT: the others list it all along and nobody
//   leaves the cluster.
// Deadlines bound the waits ("before 5 s", against 10 s without the change); no duration is asserted
// more tightly than that. The 4 s stop is the fault itself, not a wait for a state.
import test, { type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { MemberProcess } from '../harness/member-process.js';
import { clusterOf, freePorts, killAll, logTail, sizeIs, startClusterMembers, until, waitSettled } from '../harness/cluster.js';
import { RecordingWriter, verifyMaps } from '../harness/cluster-writer.js';

const SEED = Number(process.env['CLUSTER_SEED'] ?? 20261126);
/** Well under grid.max.no.heartbeat.seconds (10 s): removal and recovery must come before this. */
const BOUND_MS = 5000;

async function threeMembers(): Promise<{ ports: number[]; members: MemberProcess[]; victimIndex: number }> {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports);
  try {
    await waitSettled(ports, 3, 30_000);
  } catch (e) {
    await killAll(members);
    throw e;
  }
  const master = (await clusterOf(ports[0]!)).members[0]!.address;
  const masterIndex = ports.findIndex((p) => `[127.0.0.1]:${p}` === master);
  assert.ok(masterIndex >= 0, `the master ${master} is one of ours`);
  return { ports, members, victimIndex: (masterIndex + 1) % 3 };
}

test('kill -9: the survivors remove the member and writes recover well under the heartbeat timeout', { timeout: 120_000 }, async (t: TestContext) => {
  const { ports, members, victimIndex } = await threeMembers();
  const victim = members[victimIndex]!;
  const survivors = ports.filter((_, i) => i !== victimIndex);
  const writer = new RecordingWriter({ ports, loops: 8, seed: SEED, map: 'orders', queues: ['jobs'], hotKeysPerLoop: 16, hotShare: 0.3, offerShare: 0 });
  let ok = false;
  try {
    writer.start();
    await until('1000 acknowledged writes before the kill', 30_000, async () => (writer.acked >= 1000 ? true : null));
    const killAt = writer.elapsedMs();
    victim.child.kill('SIGKILL');
    await victim.waitForExit(5000);
    writer.markDead(victim.port);
    await until(`the survivors to list two members before ${BOUND_MS} ms`, BOUND_MS, () => sizeIs(survivors, 2));
    const removedAt = writer.elapsedMs();
    const ackedAtRemoval = writer.acked;
    await until('500 more acknowledged writes', 20_000, async () => (writer.acked >= ackedAtRemoval + 500 ? true : null));
    await writer.stop();
    await waitSettled(survivors, 2, 30_000);
    // Writes through the survivors around the kill: none waits anywhere near the heartbeat timeout.
    const across = writer.timings.filter((x) => x.port !== victim.port && x.doneMs >= killAt);
    const longest = Math.max(0, ...across.map((x) => x.doneMs - x.sentMs));
    t.diagnostic(`kill at ${killAt} ms, removal seen ${removedAt - killAt} ms later; longest write through a survivor across it ${longest} ms; ${writer.acked}/${writer.attempted} acknowledged`);
    // Which write, where, and how it ended: the clue when this fails (seen once in CI, not reproduced).
    const slowest = across.reduce<(typeof across)[number] | null>((a, x) => (a === null || x.doneMs - x.sentMs > a.doneMs - a.sentMs ? x : a), null);
    assert.ok(longest < BOUND_MS, `a write through a survivor took ${longest} ms: ${JSON.stringify(slowest)}; failures ${JSON.stringify(writer.failures.slice(0, 5))}`);
    const survivorFailures = writer.failures.filter((f) => f.port !== victim.port);
    assert.deepEqual(survivorFailures.slice(0, 20), [], 'writes through the survivors all answer 200');
    const maps = await verifyMaps(survivors[0]!, 'orders', writer);
    assert.deepEqual(maps.problems.slice(0, 20), [], `${maps.problems.length} acknowledged writes lost`);
    const removal = members.filter((m) => m !== victim).map((m) => m.stdout()).join('\n');
    assert.match(removal, /suspected: \d+ reconnect\(s\) refused/, 'the log says why the member was suspected');
    ok = true;
  } finally {
    if (!ok) for (const m of members) console.error(logTail(m, 60));
    await writer.stop().catch(() => undefined);
    await killAll(members);
  }
});

test('SIGSTOP for 4 s removes nobody: a stopped process refuses no connection', { timeout: 120_000 }, async () => {
  const { ports, members, victimIndex } = await threeMembers();
  const victim = members[victimIndex]!;
  const others = ports.filter((_, i) => i !== victimIndex);
  let ok = false;
  try {
    victim.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    let shrank = false;
    while (Date.now() - stoppedAt < 4000) {
      if ((await sizeIs(others, 2)) === true) shrank = true;
      await new Promise((resolve) => setTimeout(resolve, 200)); // the fault's own length, polled
    }
    victim.child.kill('SIGCONT');
    assert.equal(shrank, false, 'the others removed the stopped member');
    await waitSettled(ports, 3, 30_000);
    for (const m of members) assert.doesNotMatch(m.stdout(), /left the cluster|suspected: \d+ reconnect/, `member ${m.port}`);
    ok = true;
  } finally {
    if (!ok) for (const m of members) console.error(logTail(m, 60));
    victim.child.kill('SIGCONT');
    await killAll(members);
  }
});
