// The seeded WAN simulation of two clusters in the suite (tests/sim/wan-sim.ts says what a run does
// and checks): cluster A (3 members) replicating a map to cluster B (2 members) under loss, latency
// and partitions of the link between them, crashes (dead and silent) and restarts of A and B members,
// pauses of B members and outages of the whole of B; after the heal, B must equal A without a sync
// (a), no key may go back to an older write on B except inside a replay (b), and after a full sync B
// must hold all of A (c). A small fixed set of seeds runs here; scripts/wan-sim.ts runs thousands.
//
// KNOWN_BUG pins seeds of the three causes the simulation found in src/wan (below): each runs as a
// `todo` test, so the suite stays green and shows them; a fix makes them pass, and they then join
// the checked seeds. Cause 1 needs the failover between B members, so the same schedules with the
// publisher targeting one B member are checked too (they pass but for cause 2).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runWanSim, type WanSimReport } from './wan-sim.js';

const SEEDS = 40;

/**
 * Cause 1: WanTarget's stale-event filter (the per source partition watermark, src/wan/target.ts)
 * lives in each target member, while the publisher moves a partition to the other target endpoint
 * whenever a batch fails (src/wan/publisher.ts fail(): a response timeout backs the endpoint off,
 * and pump() picks healthy[p % healthy.length]). Events one B member applied are then applied again
 * by the other one out of order: a timed-out batch still in flight (or waiting in a paused member's
 * socket) reaches the first member after its resend was applied through the second (the first
 * member's watermark is older), or a resend whose first copy was applied but not acknowledged
 * carries a shorter prefix to the second member and moves the key back, after which the first
 * member's higher watermark skips the events that would restore it. B keeps the older value until
 * the key is written again.
 */
const STALE_AFTER_FAILOVER = 'bug: a WAN batch applied by one target member after newer events of its partition went through the other (per-member watermark, failover on timeout)';

/**
 * Cause 2: a sync started while an A member is dead but still listed (a silent crash before the
 * heartbeat timeout, or a dead one within the refusal window) or that dies before its first report
 * (reports are flushed every 100 ms) never ends until the 2-minute stall rule fails it: startSync
 * (src/wan/wan-service.ts) announces it to every listed member, each starts only the partitions it
 * owns, the dead member never reports, and SyncRecords.memberLeft (src/wan/sync-records.ts) fails a
 * sync only for a member that reported started partitions; the partitions it owned go to new owners
 * that never start them. wan.md: FAILED when "a member left mid-sync without handing its share over".
 */
const SYNC_ORPHANED = 'bug: a sync announced to a dead (still listed) member waits for the 2-minute stall instead of failing when the member is removed';

/**
 * Cause 3: after an A member restarts at the same address, an acknowledgement a B member sends for a
 * batch of the old incarnation (it was still applying it) reaches the new incarnation, whose
 * publisher takes it for its own batch with the same call id, sent to the other endpoint: the
 * WanTarget answers through replyTo = transport.send(peer.address, ...) (src/member/cluster-node.ts),
 * by address, not by the connection the batch came on; WanPublisher.onAck (src/wan/publisher.ts)
 * matches by call id alone, and call ids start at 1 in every incarnation. The batch's events are
 * consumed and pruned on the backups, never having reached B: lost without a sync.
 */
const ACK_FOR_ANOTHER_BATCH = 'bug: a WAN ack for an earlier incarnation\'s batch acknowledges the new incarnation\'s batch with the same call id (events lost)';

/** Seed → how it shows its cause (scripts/wan-sim.ts --seed N replays it; WAN_SIM_WATCH_KEY=k prints the batches). */
const KNOWN_BUG: ReadonlyMap<number, { readonly cause: string; readonly targetEndpoints: 1 | 2; readonly how: string }> = new Map([
  [6, { cause: STALE_AFTER_FAILOVER, targetEndpoints: 2, how: 'a batch that timed out under 1.5 s of latency reaches b1 after its resend and a clear went through b0: k2 goes back from v107 to v95 (until a later clear)' }],
  [411, { cause: STALE_AFTER_FAILOVER, targetEndpoints: 2, how: 'with only a 6 s pause of b1 (GC), a batch read when it resumes is applied after b0 applied newer events: B ends with k43=v32, A with v46' }],
  [447, { cause: STALE_AFTER_FAILOVER, targetEndpoints: 2, how: 'an ack of b1 comes late (B->A latency); the resend to b0 carries a shorter prefix and moves k21 back to v64; b1 then skips v68 (below its watermark): B ends at v64, A at v68' }],
  [2718, { cause: ACK_FOR_ANOTHER_BATCH, targetEndpoints: 2, how: 'a2 restarts at 10.0.1.3; b1 answers the old incarnation\'s batches #2 and #3 late, the new one takes the answers for its own #2 and #3 (sent to b0, silently dead): k11, k15, k44, k49, k54 never reach B' }],
  [304, { cause: SYNC_ORPHANED, targetEndpoints: 1, how: 'a sync started 1.2 s after a0 crashed silently stays IN_PROGRESS at 20/31 partitions after a0 is removed' }],
  [74, { cause: SYNC_ORPHANED, targetEndpoints: 1, how: 'a sync started 78 ms after a2 crashed (dead, not yet removed) stays IN_PROGRESS at 21/31 partitions' }],
]);

function summary(reports: WanSimReport[]): string {
  const faults = new Map<string, number>();
  for (const r of reports) for (const [k, n] of Object.entries(r.faults)) faults.set(k, (faults.get(k) ?? 0) + n);
  return [...faults].sort().map(([k, n]) => `${k} ${n}`).join(', ');
}

async function runSeeds(seeds: readonly number[], targetEndpoints: 1 | 2): Promise<{ failures: string[]; reports: WanSimReport[] }> {
  const failures: string[] = [];
  const reports: WanSimReport[] = [];
  for (const seed of seeds) {
    try {
      reports.push(await runWanSim({ seed, targetEndpoints }));
    } catch (e) {
      failures.push(`${(e as Error).message}\n  replay: npx tsx scripts/wan-sim.ts --seed ${seed}${targetEndpoints === 1 ? ' --one-endpoint' : ''}`);
    }
  }
  return { failures, reports };
}

const range = Array.from({ length: SEEDS }, (_, i) => i + 1);

test(`WAN simulation, publisher to both B members: seeds 1-${SEEDS} keep (a), (b) and (c) (known-bug seeds apart)`, async () => {
  const { failures, reports } = await runSeeds(
    range.filter((s) => !KNOWN_BUG.has(s)),
    2,
  );
  assert.deepEqual(failures, [], `${failures.length} seed(s) failed:\n${failures.join('\n')}`);
  // The runs did real work: writes replicated, (a) checked without a sync, faults of every kind.
  assert.ok(reports.reduce((n, r) => n + r.acknowledgedWrites, 0) > reports.length * 50, 'too few acknowledged writes');
  assert.ok(reports.filter((r) => r.checkedNoSync).length > reports.length / 2, '(a) was checked in too few runs');
  const kinds = summary(reports);
  for (const kind of ['loss', 'latency', 'partition', 'a-crash', 'b-crash', 'b-outage']) assert.match(kinds, new RegExp(`\\b${kind}\\b`), `no ${kind} fault in ${kinds}`);
});

test(`WAN simulation, publisher to one B member: seeds 1-${SEEDS} keep (a), (b) and (c) (known-bug seeds apart)`, async () => {
  const { failures } = await runSeeds(
    range.filter((s) => !KNOWN_BUG.has(s)),
    1,
  );
  assert.deepEqual(failures, [], `${failures.length} seed(s) failed:\n${failures.join('\n')}`);
});

for (const [seed, { cause, targetEndpoints, how }] of KNOWN_BUG) {
  test(`WAN simulation seed ${seed}${targetEndpoints === 1 ? ' (one target endpoint)' : ''}: ${how}`, { todo: cause }, async () => {
    await runWanSim({ seed, targetEndpoints });
  });
}

test('WAN simulation: a seed replays exactly (same schedule, same figures)', async () => {
  const a = await runWanSim({ seed: 3 });
  const b = await runWanSim({ seed: 3 });
  assert.deepEqual(b, a);
});
