// The persisted member metadata and the choice of a member's directory under base-dir: the file
// round trips; any damage (truncation at every point, a bit flip anywhere, another format version)
// is refused naming the file; a write is atomic (a crash before the rename leaves the old file).
// Directories: a member takes the one holding its address, else a free one, else a new one; a
// directory held by a running process is passed over; a directory without metadata is left alone;
// an unreadable metadata file stops the start naming it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { decodeMetadata, encodeMetadata, readMetadata, writeMetadata, type MemberMetadata } from '../../src/persistence/member-metadata.js';
import { chooseMemberDir } from '../../src/persistence/member-dir.js';
import { PartitionTable } from '../../src/partition/table.js';
import { GridError } from '../../src/util/errors.js';
import { SimDisk } from '../harness/sim-disk.js';

function sample(uuid: string, address: string): MemberMetadata {
  const table = PartitionTable.empty(7, 2).withReplicas(new Map([[0, ['a', 'b']], [3, ['b', null]]]));
  return {
    memberUuid: uuid,
    address,
    clusterName: 'dev',
    partitionCount: 7,
    members: [{ uuid: 'a', address: '127.0.0.1:5701' }, { uuid: 'b', address: '127.0.0.1:5702' }],
    membersVersion: 4,
    table: table.toWire(),
    clusterState: 'FROZEN',
    clusterVersion: '5.5',
    lastAliveMs: 1_700_000_000_123,
    backupSeq: 2,
  };
}

const isCorrupt = (file: string) => (e: unknown): boolean => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT' && e.message.includes(file);

test('metadata round trips, and any damage is refused naming the file', () => {
  const m = sample('a', '127.0.0.1:5701');
  const bytes = encodeMetadata(m);
  const back = decodeMetadata(bytes, 'f');
  assert.deepEqual({ ...back, table: PartitionTable.fromWire(back.table, 7) }, { ...m, table: PartitionTable.fromWire(m.table, 7) });
  for (let cut = 0; cut < bytes.length; cut++) assert.throws(() => decodeMetadata(bytes.subarray(0, cut), 'x/member.meta'), isCorrupt('x/member.meta'));
  for (let i = 0; i < bytes.length; i++) {
    const copy = Buffer.from(bytes);
    copy[i] = (copy[i] as number) ^ 0x10;
    assert.throws(() => decodeMetadata(copy, 'x/member.meta'), isCorrupt('x/member.meta'), `byte ${i}`);
  }
  const other = Buffer.from(bytes);
  other[8] = 2;
  assert.throws(() => decodeMetadata(other, 'm'), /format version 2/);
});

test('a metadata write is atomic: a crash before the rename leaves the old file', () => {
  const disk = new SimDisk({ seed: 1 });
  disk.makeDir('b/a');
  writeMetadata(disk, 'b/a', sample('a', 'x:1'));
  // A crash in the middle of the next write: the temporary file is torn, the old one stays.
  disk.append('b/a/member.meta.tmp', encodeMetadata(sample('a', 'x:2')).subarray(0, 20));
  disk.crash({ tearLastWrite: true });
  assert.equal(readMetadata(disk, 'b/a')?.address, 'x:1');
  writeMetadata(disk, 'b/a', sample('a', 'x:3'));
  disk.crash();
  assert.equal(readMetadata(disk, 'b/a')?.address, 'x:3');
});

test('a member takes its own directory, else a free one, else a new one', () => {
  const disk = new SimDisk({ seed: 2 });
  disk.makeDir('base/u1');
  disk.makeDir('base/u2');
  writeMetadata(disk, 'base/u1', sample('u1', '127.0.0.1:5701'));
  writeMetadata(disk, 'base/u2', sample('u2', '127.0.0.1:5702'));
  disk.makeDir('base/stray');
  disk.append('base/stray/notes.txt', Buffer.from('x'));
  let n = 0;
  const fresh = (): string => `new${++n}`;
  const own = chooseMemberDir(disk, 'base', ['127.0.0.1:5702'], 'p2', fresh);
  assert.equal(own.dir, 'base/u2');
  assert.equal(own.metadata?.memberUuid, 'u2');
  assert.ok(own.skipped.some((s) => s.includes('base/stray')));
  // 5703 has no directory of its own: it takes the free one (u1).
  const other = chooseMemberDir(disk, 'base', ['127.0.0.1:5703'], 'p3', fresh);
  assert.equal(other.dir, 'base/u1');
  // Everything is held now: a new directory.
  const third = chooseMemberDir(disk, 'base', ['127.0.0.1:5701'], 'p1', fresh);
  assert.equal(third.dir, 'base/new1');
  assert.equal(third.metadata, null);
  assert.ok(third.skipped.some((s) => s.includes('base/u1') && s.includes('in use')));
  // Released: 5701 gets u1 back.
  other.lock.release();
  third.lock.release();
  assert.equal(chooseMemberDir(disk, 'base', ['127.0.0.1:5701'], 'p1', fresh).dir, 'base/u1');
});

test('an unreadable metadata file stops the start, naming it', () => {
  const disk = new SimDisk({ seed: 3 });
  disk.makeDir('base/u1');
  writeMetadata(disk, 'base/u1', sample('u1', '127.0.0.1:5701'));
  disk.flipBit('base/u1/member.meta', 30, 1);
  assert.throws(() => chooseMemberDir(disk, 'base', ['127.0.0.1:5701'], 'p', () => 'n'), isCorrupt('base/u1/member.meta'));
});
