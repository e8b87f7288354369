// The Raft core's rules one at a time, on groups driven by hand (tests/harness/raft-group.ts):
// messages are delivered synchronously, ticks are counted, and every ready batch passes the
// harness's checks (one leader per term, log matching, leader completeness, state-machine
// safety, commit never back). Each test says which rule it pins and would fail without it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { RaftGroup, encode } from '../harness/raft-group.js';
import { RaftCore } from '../../src/cp/raft/core.js';
import { RAFT_DEFAULTS, raftOptionProblems } from '../../src/cp/raft/types.js';
import type { RaftMessage } from '../../src/cp/raft/types.js';
import { SeededRandom } from '../../src/util/prng.js';

// 100 ms ticks: election timeout 10–15 ticks, heartbeats every 5, a silent leader suspected after 20.
const FAST = { tickMs: 100, electionTimeoutMs: 1000, electionJitterMs: 500, heartbeatPeriodMs: 500, missedHeartbeatsMax: 4, appendBackoffMs: 100 };

function group(n: number, seed = 1, extra: object = {}): RaftGroup {
  const ids = Array.from({ length: n }, (_, i) => `m${i + 1}`);
  return new RaftGroup(ids, { raft: { ...FAST, ...extra }, seed });
}

function elect(g: RaftGroup): string {
  g.tickUntil(() => g.leader() !== undefined && g.leader()?.core.status().commit === g.leader()?.core.status().lastIndex);
  return (g.leader() as { id: string }).id;
}

test('options: the defaults are spec/cp.md\'s and hold together; broken relations are named', () => {
  assert.deepEqual(raftOptionProblems(RAFT_DEFAULTS), []);
  assert.equal(RAFT_DEFAULTS.electionTimeoutMs, 2000);
  assert.equal(RAFT_DEFAULTS.heartbeatPeriodMs, 5000);
  assert.equal(RAFT_DEFAULTS.missedHeartbeatsMax, 5);
  assert.equal(RAFT_DEFAULTS.appendEntriesMax, 100);
  assert.equal(RAFT_DEFAULTS.uncommittedEntriesMax, 100);
  assert.equal(RAFT_DEFAULTS.appendBackoffMs, 100);
  const problems = raftOptionProblems({ ...RAFT_DEFAULTS, heartbeatPeriodMs: 10_000, missedHeartbeatsMax: 1, appendEntriesMax: 0 });
  assert.equal(problems.length, 2);
  assert.match(problems.join('; '), /appendEntriesMax must be a positive integer/);
  assert.match(problems.join('; '), /heartbeat period \(10000 ms\) must be shorter than the election timeout × the missed heartbeat count \(2000 ms\)/);
});

test('a group of three elects one leader, which commits a noop of its term at once', () => {
  const g = group(3);
  const leader = elect(g);
  const st = g.get(leader).core.status();
  assert.equal(st.term, 1);
  assert.equal(st.commit, 1, 'the noop of term 1');
  assert.equal(g.get(leader).core.entryAt(1)?.kind, 'noop');
  for (const m of g.members.values()) assert.equal(m.core.status().leader, leader);
});

test('a proposal is applied on every member in order, after being persisted', () => {
  const g = group(3);
  elect(g);
  const a = g.propose('a');
  const b = g.propose('b');
  assert.ok(a !== null && b !== null);
  g.deliver();
  g.tick(6); // a heartbeat carries the commit index to the followers
  for (const m of g.members.values()) {
    assert.equal(m.applied.get(a.index), 'a');
    assert.equal(m.applied.get(b.index), 'b');
    assert.ok(m.disk.entries.some((e) => e.index === b.index), 'on the disk');
  }
});

test('nothing is sent before the ready batch that persists it: a vote and an append leave only through ready()', () => {
  const core = new RaftCore('a', { ...RAFT_DEFAULTS, ...FAST }, new SeededRandom(1), { hardState: { term: 0, vote: null, commit: 0 }, snapshot: { index: 0, term: 0, members: ['a', 'b', 'c'], data: new Uint8Array(0) }, entries: [] });
  core.step({ type: 'vote', from: 'b', to: 'a', term: 3, lastIndex: 0, lastTerm: 0, transfer: false });
  const r = core.ready();
  assert.deepEqual(r.hardState, { term: 3, vote: 'b', commit: 0 }, 'the vote is in the batch to persist');
  assert.equal(r.messages.length, 1);
  assert.equal(r.messages[0]?.type, 'voteAnswer');
  assert.throws(() => core.step({ type: 'vote', from: 'c', to: 'a', term: 3, lastIndex: 0, lastTerm: 0, transfer: false }), /between ready\(\) and advance\(\)/);
  core.advance();
  assert.equal(core.hasReady(), false);
});

test('pre-vote: a member cut off raises no term, and rejoins without deposing the leader', () => {
  const g = group(3);
  const leader = elect(g);
  const other = [...g.members.keys()].find((u) => u !== leader) as string;
  const termBefore = g.get(leader).core.status().term;
  g.isolate(other);
  g.tick(100);
  assert.equal(g.get(other).core.status().term, termBefore, 'pre-votes lost: no term raised');
  g.heal();
  g.tick(30);
  assert.equal(g.leader()?.id, leader);
  assert.equal(g.get(leader).core.status().term, termBefore);
});

test('leader stickiness: a member that heard its leader ignores a vote for another, even of a higher term', () => {
  const g = group(3);
  const leader = elect(g);
  const [x, y] = [...g.members.keys()].filter((u) => u !== leader) as [string, string];
  const term = g.get(y).core.status().term;
  g.get(y).core.step({ type: 'vote', from: x, to: y, term: term + 5, lastIndex: 100, lastTerm: term + 4, transfer: false });
  g.process();
  assert.equal(g.get(y).core.status().term, term, 'the vote was ignored');
  assert.equal(g.inbox.filter((m) => m.type === 'voteAnswer').length, 0);
  // A transfer's vote is not ignored.
  g.get(y).core.step({ type: 'vote', from: x, to: y, term: term + 5, lastIndex: 100, lastTerm: term + 4, transfer: true });
  g.process();
  assert.equal(g.get(y).core.status().term, term + 5);
  assert.equal(g.get(y).core.status().vote, x);
});

test('check-quorum: a leader cut off from its group steps down; the others elect a new one', () => {
  const g = group(3);
  const leader = elect(g);
  g.isolate(leader);
  g.tick(60);
  assert.notEqual(g.get(leader).core.status().role, 'leader', 'stepped down');
  const next = g.leader();
  assert.ok(next !== undefined && next.id !== leader);
});

test('a follower suspects a silent leader only after heartbeatPeriod × missedHeartbeatsMax, or at once when its member is gone', () => {
  const g = group(3);
  const leader = elect(g);
  g.crash(leader);
  const t0 = g.tickUntil(() => g.leader() !== undefined, 200);
  assert.ok(t0 >= 20, `no election before the silence bound (took ${t0} ticks)`);
  // Again, with the cluster saying the leader's member left.
  const g2 = group(3, 7);
  const leader2 = elect(g2);
  g2.crash(leader2);
  for (const m of g2.members.values()) if (m.up) m.core.memberGone(leader2);
  const t1 = g2.tickUntil(() => g2.leader() !== undefined, 200);
  assert.ok(t1 <= 6, `replaced within the election jitter (took ${t1} ticks)`);
});

test('commit counts only entries of the current term (Figure 8): an old-term entry is committed only under a new entry', () => {
  const g = group(5);
  const l1 = elect(g);
  // l1 appends an entry that reaches only one follower, then is cut off.
  const [f1, ...rest] = [...g.members.keys()].filter((u) => u !== l1) as [string, ...string[]];
  for (const u of rest) {
    g.cut.add(`${l1}>${u}`);
    g.cut.add(`${u}>${l1}`);
  }
  const p = g.propose('old');
  assert.ok(p !== null);
  g.deliver();
  assert.ok(g.get(f1).core.termAt(p.index) === p.term, 'f1 holds it');
  assert.ok(g.get(l1).core.status().commit < p.index, 'not committed: only 2 of 5 hold it');
  // l1 and f1 stay together; the others elect, then the group heals and l1's entry is overwritten or committed under a new term only.
  g.isolate(l1);
  g.isolate(f1);
  g.tickUntil(() => g.leader() !== undefined && g.leader()?.id !== l1 && g.leader()?.core.status().role === 'leader' && g.leader()?.id !== f1, 400);
  g.heal();
  g.tick(60);
  const l = g.leader();
  assert.ok(l !== undefined);
  for (const m of g.members.values()) {
    const at = m.core.entryAt(p.index);
    if (m.core.status().commit >= p.index) assert.ok(at === undefined || at.term === l.core.termAt(p.index), 'every member agrees on the committed entry');
  }
});

test('read index: a read is answered only after a majority confirmed the leader, at the commit index it saw', () => {
  const g = group(3);
  const leader = g.get(elect(g));
  g.propose('x');
  g.deliver();
  const commit = leader.core.status().commit;
  assert.equal(leader.core.readIndex(41), null);
  g.process();
  assert.deepEqual(leader.reads, [], 'not before the round is answered');
  g.deliver();
  assert.deepEqual(leader.reads, [{ ctx: 41, index: commit }]);
});

test('read index: a leader cut off confirms no read; a follower refuses reads', () => {
  const g = group(3);
  const leaderId = elect(g);
  const leader = g.get(leaderId);
  const follower = [...g.members.values()].find((m) => m.id !== leaderId);
  assert.equal(follower?.core.readIndex(1)?.code, 'not-leader');
  assert.equal(follower?.core.readIndex(1)?.leader, leaderId);
  g.isolate(leaderId);
  assert.equal(leader.core.readIndex(2), null);
  g.tick(3);
  assert.deepEqual(leader.reads, []);
});

test('back-pressure: proposals are refused once lastIndex − commit reaches the limit, and taken again when commits catch up', () => {
  const g = group(3, 1, { uncommittedEntriesMax: 5 });
  const leaderId = elect(g);
  for (const u of g.members.keys()) if (u !== leaderId) g.cut.add(`${leaderId}>${u}`);
  let refused = null;
  for (let i = 0; i < 10 && refused === null; i++) {
    const r = g.get(leaderId).core.propose(encode(`v${i}`));
    if (!r.ok) refused = r;
  }
  assert.equal(refused?.code, 'back-pressure');
  g.heal();
  g.tick(3);
  const again = g.get(leaderId).core.propose(encode('after'));
  assert.equal(again.ok, true);
});

test('membership: a member added through the log catches up and counts; a removed leader steps down after the change commits', () => {
  const g = group(3);
  const leaderId = elect(g);
  g.propose('before');
  g.deliver();
  g.add('m4', []);
  const r = g.get(leaderId).core.proposeMembers({ add: 'm4' });
  assert.equal(r.ok, true);
  assert.equal(g.get(leaderId).core.propose(encode('during')).ok, false, 'writes wait while a membership change is pending');
  g.tick(10);
  const m4 = g.get('m4');
  assert.deepEqual([...m4.core.status().members].sort(), ['m1', 'm2', 'm3', 'm4']);
  assert.equal(m4.applied.get(2), 'before', 'it caught up');
  // Remove the leader itself.
  const rem = g.get(leaderId).core.proposeMembers({ remove: leaderId });
  assert.equal(rem.ok, true);
  g.tick(40);
  const next = g.leader();
  assert.ok(next !== undefined && next.id !== leaderId, 'another member leads');
  assert.notEqual(g.get(leaderId).core.status().role, 'leader');
  assert.ok(!next.core.status().members.includes(leaderId));
  g.tick(60);
  assert.equal(g.leader()?.id, next.id, 'the removed member never campaigns');
});

test('snapshots: a follower far behind gets the snapshot in chunks, installs it, and catches up', () => {
  const g = new RaftGroup(['m1', 'm2', 'm3'], { raft: { ...FAST, snapshotChunkBytes: 16, entriesKeptAfterSnapshot: 2 }, seed: 3, snapshotEvery: 5 });
  const leaderId = elect(g);
  const lagging = [...g.members.keys()].find((u) => u !== leaderId) as string;
  g.crash(lagging);
  for (let i = 0; i < 30; i++) {
    g.propose(`cmd-${i}`);
    g.deliver();
  }
  const leader = g.get(leaderId);
  assert.ok(leader.core.status().firstIndex > 2, 'the leader compacted its log');
  g.restart(lagging);
  g.tick(30);
  const m = g.get(lagging);
  assert.ok(m.core.status().snapshotIndex > 0, 'installed a snapshot');
  assert.ok((g.sentCount.get('snapshot') ?? 0) > 2, 'in several chunks');
  assert.equal(m.applied.get(leader.core.status().commit), leader.applied.get(leader.core.status().commit));
  assert.equal(m.lastApplied, leader.lastApplied);
});

test('leadership transfer: the target takes over at once; writes are refused meanwhile', () => {
  const g = group(3);
  const leaderId = elect(g);
  const target = [...g.members.keys()].find((u) => u !== leaderId) as string;
  g.get(leaderId).core.transferLeadership(target);
  assert.equal(g.get(leaderId).core.propose(encode('x')).ok, false);
  g.deliver();
  assert.equal(g.leader()?.id, target);
});

test('a restart on the disk keeps term, vote and every committed entry', () => {
  const g = group(3);
  const leaderId = elect(g);
  for (let i = 0; i < 5; i++) g.propose(`v${i}`);
  g.deliver();
  g.tick(6);
  for (const id of [...g.members.keys()]) g.crash(id);
  for (const id of [...g.members.keys()]) g.restart(id);
  g.tick(60);
  const l = g.leader();
  assert.ok(l !== undefined);
  assert.ok(l.core.status().term > 1);
  for (const m of g.members.values()) for (let i = 0; i < 5; i++) assert.ok([...m.applied.values()].includes(`v${i}`));
  void leaderId;
});

test('a stale leader learns the newer term from a refusal and steps down', () => {
  const g = group(3);
  const l1 = elect(g);
  g.isolate(l1);
  g.tickUntil(() => [...g.members.values()].some((m) => m.id !== l1 && m.core.status().role === 'leader'), 400);
  g.heal();
  const msg: RaftMessage = { type: 'append', from: l1, to: [...g.members.keys()].find((u) => u !== l1) as string, term: g.get(l1).core.status().term, prevIndex: 0, prevTerm: 0, entries: [], commit: 0, round: 0 };
  g.inbox.push(msg);
  g.deliver();
  assert.notEqual(g.get(l1).core.status().role, 'leader');
});

test('commit counts only entries of the current term: a majority holding an old-term entry does not commit it', () => {
  const entries = [
    { index: 1, term: 1, kind: 'data' as const, data: encode('a'), members: null },
    { index: 2, term: 2, kind: 'data' as const, data: encode('b'), members: null },
  ];
  const core = new RaftCore('a', { ...RAFT_DEFAULTS, ...FAST }, new SeededRandom(1), { hardState: { term: 2, vote: null, commit: 1 }, snapshot: { index: 0, term: 0, members: ['a', 'b', 'c'], data: new Uint8Array(0) }, entries });
  const drain = (): RaftMessage[] => {
    const r = core.ready();
    core.advance();
    return [...r.messages];
  };
  // Campaign: pre-vote, then vote in term 3.
  for (let i = 0; i < 30 && core.status().role === 'follower'; i++) core.tick();
  drain();
  core.step({ type: 'preVoteAnswer', from: 'b', to: 'a', term: 3, granted: true });
  drain();
  core.step({ type: 'voteAnswer', from: 'b', to: 'a', term: 3, granted: true });
  assert.equal(core.status().role, 'leader');
  assert.equal(core.status().lastIndex, 3, 'the noop of term 3');
  drain();
  // b holds entry 2 (term 2): with a, a majority holds it, but it is of an earlier term.
  core.step({ type: 'appendAnswer', from: 'b', to: 'a', term: 3, success: true, index: 2, hintIndex: 0, hintTerm: 0, round: 0 });
  drain();
  assert.equal(core.status().commit, 1, 'entry 2 is not committed by counting');
  core.step({ type: 'appendAnswer', from: 'b', to: 'a', term: 3, success: true, index: 3, hintIndex: 0, hintTerm: 0, round: 0 });
  drain();
  assert.equal(core.status().commit, 3, 'the noop of term 3 commits, and entry 2 with it');
});

test('a refused append points the leader past a whole conflicting term', () => {
  const g = group(3);
  elect(g);
  const l = g.leader();
  assert.ok(l !== undefined);
  const core = new RaftCore('z', { ...RAFT_DEFAULTS, ...FAST }, new SeededRandom(1), {
    hardState: { term: 1, vote: null, commit: 0 },
    snapshot: { index: 0, term: 0, members: ['z', 'y', 'x'], data: new Uint8Array(0) },
    entries: [1, 2, 3, 4, 5].map((i) => ({ index: i, term: 1, kind: 'data' as const, data: encode(`${i}`), members: null })),
  });
  core.step({ type: 'append', from: 'y', to: 'z', term: 4, prevIndex: 7, prevTerm: 3, entries: [], commit: 0, round: 0 });
  const r = core.ready();
  const answer = r.messages[0];
  assert.ok(answer !== undefined && answer.type === 'appendAnswer');
  assert.equal(answer.success, false);
  assert.equal(answer.hintIndex, 5, 'its last index, whose term (1) is not above the one tried');
  assert.equal(answer.hintTerm, 1);
});

test('an append lost from a pipeline is sent again, though heartbeats keep reaching the follower (raft-sim seed 16)', () => {
  const g = group(3);
  const leaderId = elect(g);
  const f = [...g.members.keys()].find((u) => u !== leaderId) as string;
  g.propose('first');
  g.deliver();
  // The next append to f is lost; nothing else is.
  g.propose('lost');
  g.process();
  g.inbox = g.inbox.filter((m) => !(m.type === 'append' && m.to === f && m.entries.length > 0));
  g.deliver();
  g.tick(30);
  assert.equal(g.get(f).core.status().lastIndex, g.get(leaderId).core.status().lastIndex, 'the follower got the lost entry');
  assert.equal(g.get(f).lastApplied, g.get(leaderId).lastApplied);
});
