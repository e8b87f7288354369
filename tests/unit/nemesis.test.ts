// The pure parts of the real-process nemesis (scripts/nemesis/): option parsing and its refusals,
// the seeded fault schedule (same seed, same faults; every kind in each round of six; bounds; sides
// that make sense), the nft script (both TCP directions, loopback only), and the history checks on
// made-up histories: lost and wrong write-once keys, undelivered queue items against polls that may
// have taken them, duplicates inside and outside split-brain windows, register updates lost at the
// end and in one heal, each register map judged on its own (one per merge policy), and
// split-brain evidence read from member log lines. The nemesis itself needs root and nft and runs
// from .ci/run, not here.
import test from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/util/prng.js';
import { checkOnceReads, checkQueue, checkRegister, countsByKind, judgeRegisters, registerLostByReads, runDeliveries, type ReadResult } from '../../scripts/nemesis/analysis.js';
import { dropScript } from '../../scripts/nemesis/firewall.js';
import { registerMap } from '../../scripts/nemesis/fleet.js';
import { readMemberLog } from '../../scripts/nemesis/member-logs.js';
import { MERGE_POLICIES, parseOptions, policyShortName, UsageError } from '../../scripts/nemesis/options.js';
import { describeFault, FAULT_BOUNDS_MS, FAULT_KINDS, FaultSchedule, MASTER_PAUSE_BOUNDS_MS } from '../../scripts/nemesis/schedule.js';
import type { Op } from '../../scripts/nemesis/workload.js';

test('options: required, ranges, u32 seed, member count, policy names', () => {
  assert.deepEqual(parseOptions(['--seconds', '90', '--seed', '7']), {
    seconds: 90,
    seed: 7,
    members: 5,
    rate: 200,
    clients: 10,
    registerPolicies: [...MERGE_POLICIES],
    maxNoHeartbeatSeconds: 10,
    pauseMaster: false,
    logLevel: 'INFO',
    cpRate: 60,
    cpPersistence: false,
    help: false,
  });
  assert.equal(parseOptions(['--seconds', '90', '--seed', '7', '--cp-persistence']).cpPersistence, true);
  assert.throws(() => parseOptions(['--seconds', '90', '--seed', '7', '--cp-persistence=1']), UsageError);
  assert.equal(parseOptions(['--seconds', '90', '--seed', '7', '--cp-rate', '0']).cpRate, 0, '0: no CP subsystem');
  assert.throws(() => parseOptions(['--seconds', '90', '--seed', '7', '--cp-rate', '2001']), UsageError);
  assert.equal(parseOptions(['--seconds', '90', '--seed', '7', '--log-level', 'fine']).logLevel, 'FINE');
  assert.throws(() => parseOptions(['--seconds', '90', '--seed', '7', '--log-level', 'LOUD']), UsageError);
  assert.throws(() => parseOptions(['--seconds', '90', '--seed', '7', '--log-level']), UsageError);
  assert.equal(parseOptions(['--seconds', '90', '--seed', '7', '--pause-master']).pauseMaster, true);
  assert.throws(() => parseOptions(['--seconds', '90', '--seed', '7', '--pause-master=yes']), UsageError);
  assert.equal(parseOptions(['--seconds=10', '--seed=4294967295', '--members=9']).seed, 4294967295);
  assert.equal(parseOptions(['--help']).help, true);
  const refused: string[][] = [
    ['--seed', '1'],
    ['--seconds', '60'],
    ['--seconds', '9', '--seed', '1'],
    ['--seconds', '86401', '--seed', '1'],
    ['--seconds', '60', '--seed', '4294967296'],
    ['--seconds', '60', '--seed', '-1'],
    ['--seconds', '60', '--seed', '1.5'],
    ['--seconds', '60', '--seed', '0x10'],
    ['--seconds', '60', '--seed'],
    ['--seconds', '60', '--seed', '1', '--members', '2'],
    ['--seconds', '60', '--seed', '1', '--members', '10'],
    ['--seconds', '60', '--seed', '1', '--max-no-heartbeat', '2'],
    ['--seconds', '60', '--seed', '1', '--bogus'],
  ];
  for (const argv of refused) assert.throws(() => parseOptions(argv), UsageError, argv.join(' '));
});

test('options: --register-policy takes a comma-separated list or all, every policy by default, in one order', () => {
  const policies = (...argv: string[]): readonly string[] => parseOptions(['--seconds', '60', '--seed', '1', ...argv]).registerPolicies;
  assert.deepEqual(policies(), [...MERGE_POLICIES]);
  assert.deepEqual(policies('--register-policy', 'all'), [...MERGE_POLICIES]);
  assert.deepEqual(policies('--register-policy', 'com.hazelcast.spi.merge.PutIfAbsentMergePolicy'), ['PutIfAbsentMergePolicy']);
  // The order given does not matter (same seed, same workload); spaces around names are dropped.
  assert.deepEqual(policies('--register-policy', 'DiscardMergePolicy,com.hazelcast.spi.merge.LatestUpdateMergePolicy'), ['LatestUpdateMergePolicy', 'DiscardMergePolicy']);
  assert.deepEqual(policies('--register-policy=HigherHitsMergePolicy, PassThroughMergePolicy'), ['PassThroughMergePolicy', 'HigherHitsMergePolicy']);
  const refused: [string[], RegExp][] = [
    [['--register-policy', 'Nope'], /"Nope" is not a merge policy/],
    [['--register-policy', 'LatestUpdateMergePolicy,Nope'], /"Nope" is not a merge policy/],
    [['--register-policy', 'LatestUpdate'], /"LatestUpdate" is not a merge policy/],
    [['--register-policy', 'all,DiscardMergePolicy'], /"all" is not a merge policy/],
    [['--register-policy', 'ALL'], /"ALL" is not a merge policy/],
    [['--register-policy', 'LatestUpdateMergePolicy,LatestUpdateMergePolicy'], /names LatestUpdateMergePolicy twice/],
    [['--register-policy', 'DiscardMergePolicy,com.hazelcast.spi.merge.DiscardMergePolicy'], /names DiscardMergePolicy twice/],
    [['--register-policy', 'LatestUpdateMergePolicy,'], /empty name/],
    [['--register-policy', ','], /empty name/],
    [['--register-policy', ''], /empty name/],
    [['--register-policy'], /needs a value/],
    [['--register-policy', '--members', '5'], /needs a value/],
  ];
  for (const [argv, message] of refused) {
    assert.throws(() => policies(...argv), (e: unknown) => e instanceof UsageError && message.test(e.message), argv.join(' '));
  }
});

test('register maps: one per policy, named after it without MergePolicy, in lower case', () => {
  assert.deepEqual(
    MERGE_POLICIES.map(registerMap),
    [
      'nemesis-reg-passthrough',
      'nemesis-reg-putifabsent',
      'nemesis-reg-latestupdate',
      'nemesis-reg-higherhits',
      'nemesis-reg-latestaccess',
      'nemesis-reg-expirationtime',
      'nemesis-reg-discard',
    ],
  );
  assert.equal(policyShortName('DiscardMergePolicy'), 'discard');
});

test('schedule: seeded, every kind in each round of six, bounded, sensible sides', () => {
  for (const members of [3, 4, 5, 7, 9]) {
    const a = new FaultSchedule(new SeededRandom(42), members);
    const b = new FaultSchedule(new SeededRandom(42), members);
    for (let round = 0; round < 20; round++) {
      const faults = FAULT_KINDS.map(() => a.next());
      assert.deepEqual(faults, FAULT_KINDS.map(() => b.next()), 'same seed, same faults');
      assert.deepEqual(new Set(faults.map((f) => f.kind)), new Set(FAULT_KINDS));
      for (const f of faults) {
        const bounds = f.kind === 'kill' ? FAULT_BOUNDS_MS.kill : f.kind === 'pause' ? FAULT_BOUNDS_MS.pause : FAULT_BOUNDS_MS.partition;
        assert.ok(f.durationMs >= bounds[0] && f.durationMs <= bounds[1], `${f.kind} ${f.durationMs}`);
        if (f.kind === 'kill' || f.kind === 'pause') {
          assert.ok(f.target !== null && f.target >= 0 && f.target < members);
          continue;
        }
        const sides = [...f.sideA, ...f.sideB, ...(f.bridge === null ? [] : [f.bridge])];
        assert.equal(new Set(sides).size, sides.length, 'sides are disjoint');
        assert.ok(f.sideA.length > 0 && f.sideB.length > 0);
        if (f.kind === 'partition-majority') assert.ok(f.sideA.length > f.sideB.length && sides.length === members);
        if (f.kind === 'partition-isolate') assert.ok(f.sideB.length === 1 && sides.length === members);
        if (f.kind === 'partition-bridge') assert.ok(f.bridge !== null && sides.length === members);
        if (f.kind === 'partition-one-way') assert.deepEqual(f.drops, [{ from: f.sideA, to: f.sideB }]);
        else assert.equal(f.drops.length, 2);
      }
    }
  }
  const other = new FaultSchedule(new SeededRandom(43), 5);
  const first = new FaultSchedule(new SeededRandom(42), 5);
  assert.notDeepEqual(Array.from({ length: 6 }, () => other.next()), Array.from({ length: 6 }, () => first.next()), 'another seed, another schedule');
});

test('schedule with pauseMaster: two master pauses of 15-25 s in every round of seven, the other kinds as before', () => {
  const s = new FaultSchedule(new SeededRandom(7), 5, true);
  for (let round = 0; round < 20; round++) {
    const faults = Array.from({ length: FAULT_KINDS.length + 1 }, () => s.next());
    const pauses = faults.filter((f) => f.kind === 'pause');
    assert.equal(pauses.length, 2);
    assert.deepEqual(new Set(faults.map((f) => f.kind)), new Set(FAULT_KINDS));
    for (const f of pauses) {
      assert.equal(f.master, true);
      assert.ok(f.durationMs >= MASTER_PAUSE_BOUNDS_MS[0] && f.durationMs <= MASTER_PAUSE_BOUNDS_MS[1], `${f.durationMs}`);
      assert.match(describeFault(f, (i) => `127.0.0.${11 + i}`), /^SIGSTOP master 127\.0\.0\.1\d for (1[5-9]|2[0-5])\.\d s$/);
    }
    for (const f of faults) if (f.kind !== 'pause') assert.equal(f.master, false);
  }
  assert.ok(new FaultSchedule(new SeededRandom(7), 5).next().master === false);
});

test('nft script: flushes our chain, drops both TCP directions on the member port, loopback only', () => {
  assert.equal(dropScript([], 15701), 'flush chain inet grid_nemesis output\n');
  const s = dropScript([{ from: ['127.0.0.11', '127.0.0.12'], to: ['127.0.0.13'] }], 15701);
  assert.equal(
    s,
    'flush chain inet grid_nemesis output\n' +
      'add rule inet grid_nemesis output ip saddr { 127.0.0.11, 127.0.0.12 } ip daddr { 127.0.0.13 } tcp dport 15701 drop\n' +
      'add rule inet grid_nemesis output ip saddr { 127.0.0.11, 127.0.0.12 } ip daddr { 127.0.0.13 } tcp sport 15701 drop\n',
  );
  assert.throws(() => dropScript([{ from: ['10.0.0.1'], to: ['127.0.0.13'] }], 15701), /loopback/);
  assert.throws(() => dropScript([{ from: ['127.0.0.11'], to: ['127.0.0.13; flush ruleset'] }], 15701), /loopback/);
});

let clock = 1000;
function op(kind: Op['kind'], key: string, value: string, outcome: Op['outcome'] = 'ack', status = outcome === 'ack' ? 200 : outcome === 'failed' ? 503 : 0): Op {
  clock += 10;
  return { kind, member: 0, map: kind === 'offer' || kind === 'poll' ? 'nemesis-q' : kind === 'once' ? 'nemesis-once' : 'nemesis-reg-latestupdate', key, value, sentMs: clock, endMs: clock + 5, outcome, status, detail: '' };
}
const v = (value: string): ReadResult => ({ kind: 'value', value });
const absent: ReadResult = { kind: 'absent' };

test('write-once keys: acknowledged must read back through every member; failed ones may be absent, never another value', () => {
  const history = [op('once', 'k1', 'v1'), op('once', 'k2', 'v2'), op('once', 'k3', 'v3', 'indeterminate'), op('once', 'k4', 'v4', 'failed')];
  const reads = new Map<string, ReadResult[]>([
    ['k1', [v('v1'), v('v1')]],
    ['k2', [v('v2'), absent]],
    ['k3', [absent, v('v3')]],
    ['k4', [v('zzz'), absent]],
  ]);
  const r = checkOnceReads(history, reads);
  assert.equal(r.checked, 4);
  assert.deepEqual(r.lost.map((p) => [p.key, p.member]), [['k2', 1]]);
  assert.deepEqual(r.wrong.map((p) => [p.key, p.member]), [['k4', 0]]);
  assert.deepEqual(countsByKind(history).once, { acked: 2, failed: 1, indeterminate: 1 });
});

test('queue: undelivered items against polls without an answer, unknown items, duplicates inside and outside split brains', () => {
  const history = [
    op('offer', 'q1', 'q1'),
    op('offer', 'q2', 'q2'),
    op('offer', 'q3', 'q3'),
    op('offer', 'q4', 'q4', 'indeterminate'),
    op('poll', '', 'q1'),
    op('poll', '', 'q2'),
    op('poll', '', '', 'failed'),
    op('poll', '', '', 'failed', 400),
    { ...op('poll', '', '', 'failed'), detail: 'cluster not ready: this member has not joined a cluster yet' },
  ];
  const run = runDeliveries(history);
  assert.deepEqual(run.map((d) => d.item), ['q1', 'q2']);
  const drain = (item: string, at: number) => ({ item, sentMs: at, endMs: at + 1, member: 1, duringRun: false });
  // q3 never delivered: one poll failed with 503 (it may have taken q3); the 400 one and the 503
  // of a member not joined yet cannot have.
  let r = checkQueue(history, [...run, drain('zz', 5000)], []);
  assert.deepEqual(r.undelivered, ['q3']);
  assert.equal(r.uncertainPolls, 1);
  assert.equal(r.lost, 0);
  assert.deepEqual(r.unknown, ['zz']);
  // Without that poll, q3 is lost.
  r = checkQueue(history.filter((o) => o.status !== 503 || o.kind !== 'poll' || o.detail !== ''), run, []);
  assert.equal(r.lost, 1);
  // A duplicate of an item that was in the queue during a split-brain window (between its offer
  // and its first delivery) is explained; one whose whole life lies outside every window is not.
  const q1Offer = history[0]!;
  const q2First = run[1]!;
  r = checkQueue(history, [...run, drain('q1', 9000), drain('q3', 9000), drain('q2', 9100)], [
    { startMs: q1Offer.sentMs, endMs: q1Offer.sentMs + 1, label: 'fault 1' },
    { startMs: 9500, endMs: 9600, label: 'fault 2' },
  ]);
  assert.equal(r.lost, 0);
  assert.deepEqual(
    r.duplicates.map((d) => [d.item, d.count, d.explainedBy, d.how]),
    [
      ['q1', 2, 'fault 1', 'held'],
      ['q2', 2, null, null],
    ],
  );
  // Delivered before a split began and again by a side of it: explained, as a stale copy.
  r = checkQueue(history, [...run, drain('q2', 9100)], [{ startMs: q2First.endMs + 1, endMs: 9200, label: 'fault 3' }]);
  assert.deepEqual(r.duplicates.map((d) => [d.item, d.explainedBy, d.how]), [['q2', 'fault 3', 'stale']]);
});

test('register: updates lost when the final value is older than the last acknowledged write; wrong values and disagreement fail', () => {
  const history = [op('reg', 'r-0', '1'), op('reg', 'r-0', '2'), op('reg', 'r-0', '3'), op('reg', 'r-0', '4', 'indeterminate'), op('reg', 'r-1', '1'), op('reg', 'r-1', '2'), op('reg', 'r-2', '1'), op('reg', 'r-3', '1'), op('reg', 'r-4', '1')];
  const finals = new Map<string, ReadResult[]>([
    ['r-0', [v('1'), v('1')]], // 2 and 3 were acknowledged after it: 2 updates lost
    ['r-1', [v('2'), v('2')]],
    ['r-2', [v('9'), v('9')]], // never written
    ['r-3', [v('1'), absent]], // members disagree
    ['r-4', [absent, absent]], // an acknowledged write, and nothing there
  ]);
  const r = checkRegister(history, finals);
  assert.equal(r.keys, 5);
  assert.equal(r.ackedWrites, 8);
  assert.equal(r.updatesLost, 2);
  assert.equal(r.keysBehind, 1);
  assert.equal(r.problems.length, 3);
  assert.match(r.problems.join('\n'), /r-2: holds 9, a value never written/);
  assert.match(r.problems.join('\n'), /r-3: members disagree/);
  assert.match(r.problems.join('\n'), /r-4: absent after the heal/);
  assert.deepEqual(r.lost, ['r-0=2', 'r-0=3']);
  // The last write unacknowledged but applied is not a loss.
  assert.equal(checkRegister(history.slice(0, 4), new Map([['r-0', [v('4')]]])).updatesLost, 0);
  // A read in a quiet window older than an earlier acknowledged write shows that write lost; a
  // read inside a fault, a failed read, and writes acknowledged after the read was sent are not judged.
  const reads = [op('read', 'r-0', '1'), op('read', 'r-0', '3'), op('read', 'r-1', '', 'ack', 204), op('read', 'r-0', '1', 'failed'), op('read', 'r-0', '1')];
  const all = [...history, ...reads];
  const quiet = [{ startMs: reads[0]!.sentMs, endMs: reads[3]!.endMs, label: 'quiet' }];
  assert.deepEqual(registerLostByReads(all, quiet), { lost: ['r-0=2', 'r-0=3', 'r-1=1', 'r-1=2'], judged: 3 });
  assert.deepEqual(registerLostByReads(all, []), { lost: [], judged: 0 });
  assert.deepEqual(countsByKind(all).read, { acked: 4, failed: 1, indeterminate: 0 });
});

test("register: each policy's map judged on its own; lost writes inside a split brain are the policy's, outside a failure", () => {
  const a = 'nemesis-reg-latestupdate';
  const b = 'nemesis-reg-discard';
  const on = (map: string, o: Op): Op => ({ ...o, map });
  // Both maps have key r-0. Map a: 1 and 2 acknowledged, then a quiet read sees 1 (2 lost), and 3
  // is acknowledged later, so the final value 3 alone would hide that loss. Map b: 1..7
  // acknowledged and read back. Mixed together, a's read of 1 would show b's 7 lost too, and b's
  // final value would look like a value that a never wrote.
  const a1 = on(a, op('reg', 'r-0', '1'));
  const a2 = on(a, op('reg', 'r-0', '2'));
  const b7 = on(b, op('reg', 'r-0', '7'));
  const bOthers = ['1', '2', '3', '4', '5', '6'].map((x) => on(b, op('reg', 'r-0', x, 'indeterminate')));
  const aRead = on(a, op('read', 'r-0', '1'));
  const a3 = on(a, op('reg', 'r-0', '3'));
  const a4 = on(a, op('reg', 'r-0', '4')); // acknowledged after every read: lost only to the final check
  const bRead = on(b, op('read', 'r-0', '7'));
  const history = [a1, a2, ...bOthers, b7, aRead, a3, a4, bRead];
  const quiet = [{ startMs: aRead.sentMs, endMs: bRead.endMs, label: 'quiet' }];
  const finals = new Map([
    [a, new Map([['r-0', [v('3'), v('3')]]])],
    [b, new Map([['r-0', [v('7'), v('7')]]])],
  ]);
  // a's write 2 was acknowledged inside a split brain, its write 4 outside every one.
  const split = [{ startMs: a2.sentMs, endMs: a2.endMs, label: 'fault 1' }];
  const [ra, rb] = judgeRegisters(history, [a, b], quiet, split, finals);
  assert.deepEqual(
    { map: ra!.map, acked: ra!.ackedWrites, judged: ra!.readsJudged, behind: ra!.keysBehind, inSplit: ra!.lostInSplitBrain.map((o) => o.value), outside: ra!.lostOutsideSplitBrain.map((o) => o.value), problems: ra!.problems },
    { map: a, acked: 4, judged: 1, behind: 1, inSplit: ['2'], outside: ['4'], problems: [] },
  );
  assert.deepEqual(
    { map: rb!.map, acked: rb!.ackedWrites, judged: rb!.readsJudged, behind: rb!.keysBehind, inSplit: rb!.lostInSplitBrain, outside: rb!.lostOutsideSplitBrain, problems: rb!.problems },
    { map: b, acked: 1, judged: 1, behind: 0, inSplit: [], outside: [], problems: [] },
  );
  // The same history as one map (the old single register) would blame b's write 7 on a's read.
  assert.ok(registerLostByReads(history, quiet).lost.includes('r-0=7'));
  // Without the split-brain window, a's write 2 is a failure as well.
  assert.deepEqual(judgeRegisters(history, [a], quiet, [], finals)[0]!.lostOutsideSplitBrain.map((o) => o.value), ['2', '4']);
  // A Discard map: a write acknowledged before a split brain and lost at its heal is the policy's
  // (the larger side may have held no replica of its partition); without any later split brain it
  // stays a failure. Write 4 of map a, judged as if a were a Discard map, falls before no window.
  const early = [{ startMs: a3.sentMs, endMs: a3.endMs, label: 'fault 2' }];
  assert.deepEqual(judgeRegisters(history, [a], quiet, early, finals)[0]!.lostOutsideSplitBrain.map((o) => o.value), ['2', '4']);
  const asDiscard = judgeRegisters(history, [a], quiet, early, finals, new Set([a]))[0]!;
  assert.deepEqual([asDiscard.lostInSplitBrain.map((o) => o.value), asDiscard.lostOutsideSplitBrain.map((o) => o.value)], [['2'], ['4']]);
  // A key absent after the heal: a failure for every policy; for a Discard map the policy's when
  // every acknowledged write of it was sent before a split brain ended, a failure otherwise.
  const absentFinals = new Map([[a, new Map([['r-0', [{ kind: 'absent' } as ReadResult, { kind: 'absent' } as ReadResult]]])]]);
  assert.match(judgeRegisters(history, [a], quiet, [{ startMs: 0, endMs: Infinity, label: 'split' }], absentFinals)[0]!.problems.join('\n'), /r-0: absent after the heal/);
  const discardAbsent = judgeRegisters(history, [a], quiet, [{ startMs: 0, endMs: a4.sentMs + 1, label: 'split' }], absentFinals, new Set([a]))[0]!;
  assert.deepEqual(discardAbsent.problems, []);
  assert.deepEqual(discardAbsent.lostInSplitBrain.map((o) => o.value).sort(), ['1', '2', '3', '4']);
  assert.match(judgeRegisters(history, [a], quiet, [{ startMs: 0, endMs: a3.endMs, label: 'split' }], absentFinals, new Set([a]))[0]!.problems.join('\n'), /r-0: absent after the heal/, 'write 4 came after every split');
  // A map's final values are checked against its own writes only: b's 7 is a value a never wrote.
  assert.match(judgeRegisters(history, [a], quiet, split, new Map([[a, finals.get(b)!]]))[0]!.problems.join('\n'), /r-0: holds 7, a value never written/);
  // Never healed: nothing read back, writes and reads counted, no loss judged.
  assert.deepEqual(
    judgeRegisters(history, [a, b], quiet, split, null).map((r) => [r.ackedWrites, r.readsJudged, r.keysBehind, r.lostInSplitBrain.length, r.lostOutsideSplitBrain.length]),
    [
      [4, 1, 0, 0, 0],
      [1, 1, 0, 0, 0],
    ],
  );
});

test('member logs: split-brain evidence, removals of live and killed incarnations, errors and notes', () => {
  const live = '11111111-1111-4111-8111-111111111111';
  const killed = '22222222-2222-4222-8222-222222222222';
  const t = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  const incarnations = new Map([
    [live, { uuid: live, member: 'a', goneAtMs: null }],
    [killed, { uuid: killed, member: 'b', goneAtMs: Date.UTC(2026, 0, 1, 0, 0, 5) }],
  ]);
  const text = [
    `${t(10)} INFO    [127.0.0.11]:15701 [cluster] removed ${killed} (no heartbeat)`,
    `${t(11)} INFO    [127.0.0.11]:15701 [cluster] removed ${live} (no heartbeat)`,
    `${t(12)} INFO    [127.0.0.13]:15701 [cluster] took over as master with 4 member(s); removed ${live}`,
    `${t(13)} WARNING [127.0.0.12]:15701 [cluster] left the cluster: the master removed this member; joining again`,
    `${t(14)} WARNING [127.0.0.11]:15701 [cluster] split brain: cluster c1 merges into cluster c2 (master 127.0.0.13:15701) because it has 4 data member(s), this cluster 1`,
    `${t(15)} SEVERE  [127.0.0.11]:15701 [migration] partition 5 lost every replica: its data is gone`,
    `${t(16)} SEVERE  [127.0.0.11]:15701 [http] unexpected failure in GET /x: TypeError: boom`,
    '\tMember [127.0.0.11]:15701 - whatever this',
    '[stderr] (node:12) Warning: something',
    '[stderr] TypeError: Cannot read properties of undefined',
    '[stderr]     at f (file:///x.js:1:2)',
  ].join('\n');
  const r = readMemberLog('127.0.0.11:15701', text, incarnations);
  assert.deepEqual(
    r.evidence.map((e) => [e.kind, new Date(e.atMs).getUTCSeconds()]),
    [
      ['removed-alive', 11],
      ['removed-alive', 12],
      ['left', 13],
      ['merge', 14],
    ],
  );
  assert.equal(r.severe, 2);
  assert.equal(r.errors.length, 3);
  assert.deepEqual(r.notes.map((n) => n.line), ['[stderr] (node:12) Warning: something']);
});
