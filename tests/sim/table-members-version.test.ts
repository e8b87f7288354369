// A member applies a partition table its master publishes alone only when the table was made under
// the member list the member holds. Seed 3038564 (one fault at a time, 100,000-seed run of
// 2026-11-28): the view in which the master removed two members was lost to a partition, the table
// made after it arrived after the heal, and the member, claiming mastership against that master,
// carried the table into a cluster that kept the two members: their partitions were given to
// members that had left, and an acknowledged write was lost while one of the two still held it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { message, type TableWire } from '../../src/cluster/messages.js';
import { ScenarioCluster, scenarioConfig, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';

test('a table from the master made under another member list is not applied; one made under ours is', () => {
  const world = new SimWorld(91, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '7' });
  const cluster = new ScenarioCluster(world, cfg, ['10.0.0.1:5701', '10.0.0.2:5701', '10.0.0.3:5701'], 'table-members-version');
  const members = cluster.members;
  cluster.until('the three members form one cluster', () => cluster.settled(members));
  const [a, b] = members as [ScenarioMember, ScenarioMember];
  assert.ok(a.node.membership.isMaster, 'the first member is the master');
  const from = { uuid: a.node.uuid, address: a.address };
  const version = b.node.partitions.table.version;
  const newer: TableWire = { ...a.node.partitions.tableWire(), version: version + 1 };
  const membersVersion = b.node.membership.version;

  b.node.onMessage(from, message('partitionTable', { table: newer, migrationQueue: 0, membersVersion: membersVersion + 1 }));
  assert.equal(b.node.partitions.table.version, version, 'a table made under a member list this member has not seen is ignored');

  b.node.onMessage(from, message('partitionTable', { table: newer, migrationQueue: 0, membersVersion }));
  assert.equal(b.node.partitions.table.version, version + 1, 'a table made under the member list it holds is applied');
  cluster.stop();
});
