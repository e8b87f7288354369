// Split-brain merges are decided only on an answer to the master's own latest probe of that address
// that came back within half a probe interval (membership.ts). A probe received, or an answer held in
// a partitioned connection, describes the other cluster as it was: at the heal of --register --tcp
// seed 520, master 10.0.0.2 merged into 10.0.0.3 on a probe 10.0.0.3 had sent during the partition
// (2 data members then), while 10.0.0.3 merged into 10.0.0.2 on a fresh answer; both sides left.
import test from 'node:test';
import assert from 'node:assert/strict';
import { message } from '../../src/cluster/messages.js';
import type { Message, MessageOf } from '../../src/cluster/messages.js';
import { member, TEST_PROBE_INTERVAL_MS as PROBE_INTERVAL_MS, testMembership } from '../harness/membership.js';

const SELF = member('10.0.0.2', 'aaaa');
const OTHER = member('10.0.0.3', 'bbbb');
const OTHER_ADDRESS = '10.0.0.3:5701';
/** The other side: 3 data members, so this master (a cluster of one) merges into it. */
const BIGGER = { clusterId: 'other-cluster', dataMembers: 3, foundedAtMs: 1 };

function master(): ReturnType<typeof testMembership> {
  const t = testMembership(SELF); // no join addresses: founds a cluster of one
  assert.equal(t.m.isMaster, true);
  return t;
}

function probesTo(sent: { to: string; m: Message }[], address: string): MessageOf<'mergeProbe'>[] {
  return sent.filter((s) => s.to === address && s.m.kind === 'mergeProbe').map((s) => s.m as MessageOf<'mergeProbe'>);
}

function answer(probeId: number): Message {
  return message('mergeProbeAnswer', { probeId, uuid: OTHER.uuid, address: OTHER_ADDRESS, masterAddress: OTHER_ADDRESS, cluster: BIGGER });
}

test('a probe from the master of a bigger side is answered and probed back, not merged on', () => {
  const { m, sent } = master();
  m.handle({ uuid: OTHER.uuid, address: OTHER_ADDRESS }, message('mergeProbe', { member: OTHER, cluster: BIGGER, probeId: 41 }));
  assert.equal(m.counters.merges, 0, 'no merge on a probe: it may have waited in a partitioned connection');
  assert.equal(m.joined, true);
  const answers = sent.filter((s) => s.to === OTHER_ADDRESS && s.m.kind === 'mergeProbeAnswer').map((s) => s.m as MessageOf<'mergeProbeAnswer'>);
  assert.equal(answers.length, 1);
  assert.equal(answers[0]?.body.probeId, 41, 'the answer names the probe it answers');
  assert.deepEqual(answers[0]?.body.cluster, m.clusterInfo);
  const back = probesTo(sent, OTHER_ADDRESS);
  assert.equal(back.length, 1, 'probed back at once');
  // A fresh answer to that probe decides.
  m.handle({ uuid: OTHER.uuid, address: OTHER_ADDRESS }, answer(back[0]?.body.probeId as number));
  assert.equal(m.counters.merges, 1);
  assert.equal(m.joined, false, 'the smaller side left to join the other');
});

test('a second probe from the same master while a probe back is fresh is not probed back again (no ping-pong)', () => {
  const { m, sent } = master();
  const from = { uuid: OTHER.uuid, address: OTHER_ADDRESS };
  m.handle(from, message('mergeProbe', { member: OTHER, cluster: BIGGER, probeId: 1 }));
  m.handle(from, message('mergeProbe', { member: OTHER, cluster: BIGGER, probeId: 2 }));
  assert.equal(probesTo(sent, OTHER_ADDRESS).length, 1);
});

test('an answer to an earlier probe of that address, held until after a newer probe, is ignored', () => {
  const { m, sent } = master();
  const from = { uuid: OTHER.uuid, address: OTHER_ADDRESS };
  m.handle(from, message('mergeProbe', { member: OTHER, cluster: BIGGER, probeId: 1 }));
  const first = probesTo(sent, OTHER_ADDRESS)[0]?.body.probeId as number;
  m.handle(from, answer(first - 1));
  assert.equal(m.counters.merges, 0);
  assert.equal(m.counters.staleProbeAnswers, 1);
  assert.equal(m.joined, true);
});

test('an answer that comes back later than half a probe interval is ignored', () => {
  const { m, sent, time } = master();
  const from = { uuid: OTHER.uuid, address: OTHER_ADDRESS };
  m.handle(from, message('mergeProbe', { member: OTHER, cluster: BIGGER, probeId: 1 }));
  const id = probesTo(sent, OTHER_ADDRESS)[0]?.body.probeId as number;
  time.advance(PROBE_INTERVAL_MS / 2 + 1);
  m.handle(from, answer(id));
  assert.equal(m.counters.merges, 0);
  assert.equal(m.counters.staleProbeAnswers, 1);
});

test('an answer from a member that is not the master there leads to a probe of its master, not a merge', () => {
  const { m, sent } = master();
  const from = { uuid: OTHER.uuid, address: OTHER_ADDRESS };
  m.handle(from, message('mergeProbe', { member: OTHER, cluster: BIGGER, probeId: 1 }));
  const id = probesTo(sent, OTHER_ADDRESS)[0]?.body.probeId as number;
  m.handle(from, message('mergeProbeAnswer', { probeId: id, uuid: OTHER.uuid, address: OTHER_ADDRESS, masterAddress: '10.0.0.4:5701', cluster: BIGGER }));
  assert.equal(m.counters.merges, 0);
  assert.equal(probesTo(sent, '10.0.0.4:5701').length, 1);
});
