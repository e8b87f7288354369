// After a mastership claim the claimer adopts the newest table only among those made while every
// staying member was a member (src/replication/partition-service.ts, tablesMadeWithEveryone; seed
// 121906 in the simulation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MemberWire, ViewWire } from '../../src/cluster/messages.js';
import { PartitionTable } from '../../src/partition/table.js';
import { tablesMadeWithEveryone } from '../../src/replication/partition-service.js';

const member = (uuid: string): MemberWire => ({ uuid, host: '10.0.0.1', port: 5701, lite: false, version: '0.1.0' });
const table = (version: number, replicas: (string | null)[][]): PartitionTable => new PartitionTable(version, 2, replicas, replicas.map(() => version));
const view = (members: string[], t: PartitionTable): ViewWire => ({ clusterId: 'c', foundedAtMs: 0, membersVersion: 5, members: members.map(member), table: t.toWire(), clusterState: 0, migrationQueue: 0 });

test('a view listing every staying member, whose table still gives replicas to those the claimer gives some to, counts', () => {
  const own = view(['b', 'c', 'd'], table(10, [['b', 'c'], ['d', 'b']]));
  const newer = view(['a', 'b', 'c', 'd'], table(12, [['c', 'b'], ['d', 'c']]));
  assert.deepEqual(tablesMadeWithEveryone([own, newer]).map((t) => t.version), [10, 12]);
});

test("a view missing a staying member, or a table that gives a holder nothing (made by a master that removed it), does not count", () => {
  const own = view(['b', 'c', 'd'], table(10, [['b', 'c'], ['d', 'b']]));
  const lacksD = view(['a', 'b', 'c'], table(12, [['b', 'c'], ['c', 'b']]));
  // Lists everyone (a view that came before the removal) but carries the table of a master that
  // removed b, c and d: only a and d hold anything in it, and b and c held replicas in the claimer's.
  const removedOthers = view(['a', 'b', 'c', 'd'], table(14, [['a', null], ['d', 'a']]));
  assert.deepEqual(tablesMadeWithEveryone([own, lacksD, removedOthers]).map((t) => t.version), [10]);
});
