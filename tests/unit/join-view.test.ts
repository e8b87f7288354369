// A member that is not joined adopts a view only from the master that answered its join request
// since it last left a cluster (membership.ts, admittingMaster). A view held in a partitioned TCP
// connection arrives after the heal: in nemesis seed 102, 127.0.0.12, which had just left its side
// to merge into 127.0.0.13's cluster, took a view of version 26 that .13 had sent before removing
// it, and for 17 ms pumped its hand-back and retried its forwarded calls against a table its
// cluster no longer had, until .13 told it it was not a member.
import test from 'node:test';
import assert from 'node:assert/strict';
import { message } from '../../src/cluster/messages.js';
import type { ViewWire } from '../../src/cluster/messages.js';
import { member, testMembership } from '../harness/membership.js';

const JOINER = member('127.0.0.12', 'joiner');
const MASTER = member('127.0.0.13', 'master');
const MASTER_ADDRESS = '127.0.0.13:5701';
const FROM_MASTER = { uuid: MASTER.uuid, address: MASTER_ADDRESS };

function view(version: number): ViewWire {
  return {
    clusterId: 'c',
    foundedAtMs: 1,
    membersVersion: version,
    members: [MASTER, JOINER],
    table: { version: 0, width: 0, uuids: [], slots: Buffer.alloc(0), partitionVersions: Buffer.alloc(0) },
    clusterState: 0,
    migrationQueue: 0,
  };
}

const inMyBatch = message('joinAnswer', { masterAddress: MASTER_ADDRESS, joined: true, uuid: MASTER.uuid, address: MASTER_ADDRESS, refusal: '', cluster: { clusterId: 'c', dataMembers: 1, foundedAtMs: 1 } });

test('a view that names a joiner before its master answered its join request is not adopted', () => {
  const { m } = testMembership(JOINER, [MASTER_ADDRESS]);
  assert.equal(m.joined, false);
  m.handle(FROM_MASTER, message('membersView', view(26)));
  assert.equal(m.joined, false, 'a view sent before this member asked to join');
  assert.equal(m.counters.unaskedViews, 1);
  m.handle(FROM_MASTER, inMyBatch);
  m.handle(FROM_MASTER, message('membersView', view(29)));
  assert.equal(m.joined, true);
  assert.equal(m.version, 29);
});

test('an answer from another master does not let this master\'s view in', () => {
  const { m } = testMembership(JOINER, [MASTER_ADDRESS, '127.0.0.14:5701']);
  m.handle({ uuid: 'someone', address: '127.0.0.14:5701' }, message('joinAnswer', { masterAddress: '127.0.0.14:5701', joined: true, uuid: 'someone', address: '127.0.0.14:5701', refusal: '', cluster: { clusterId: 'd', dataMembers: 1, foundedAtMs: 1 } }));
  m.handle(FROM_MASTER, message('membersView', view(26)));
  assert.equal(m.joined, false);
});

test('a master re-sending the view to a joiner that asks again answers first, so the view is taken', () => {
  const master = testMembership(MASTER);
  const joinRequest = message('joinRequest', { member: JOINER, cluster: { clusterId: '', dataMembers: 0, foundedAtMs: 0 }, reset: false });
  const fromJoiner = { uuid: JOINER.uuid, address: '127.0.0.12:5701' };
  master.m.handle(fromJoiner, joinRequest);
  master.time.advance(2000); // the join batch closes: the joiner is admitted and the view published
  assert.equal(master.m.isMember(JOINER.uuid), true);
  master.sent.length = 0;
  master.m.handle(fromJoiner, joinRequest); // it missed the answer and the view
  const kinds = master.sent.filter((s) => s.to === '127.0.0.12:5701').map((s) => s.m.kind);
  assert.deepEqual(kinds.slice(0, 2), ['joinAnswer', 'membersView']);
});
