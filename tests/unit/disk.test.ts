// The storage seam's two twins keep one contract (src/persistence/disk.ts): the real FileDisk on a
// temporary directory and the SimDisk run the same sequence of operations and must agree. Then the
// parts only one has: the SimDisk's crash (synced bytes always survive, unsynced ones partly, a torn
// write leaves junk only after the synced prefix), full disk and failing fsync; the FileDisk's lock
// against a running process and its take-over of a lock left by a dead one.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { FileDisk } from '../../src/runtime/file-disk.js';
import { SimDisk } from '../harness/sim-disk.js';
import type { Disk } from '../../src/persistence/disk.js';
import { GridError } from '../../src/util/errors.js';

function exercise(disk: Disk, root: string): unknown[] {
  const seen: unknown[] = [];
  const d = `${root}/a/b`;
  disk.makeDir(d);
  disk.append(`${d}/one`, Buffer.from('hello '));
  disk.append(`${d}/one`, Buffer.from('world'));
  disk.syncNow(`${d}/one`);
  seen.push(disk.size(`${d}/one`), Buffer.from(disk.readAt(`${d}/one`, 6, 100)).toString(), Buffer.from(disk.readFile(`${d}/one`)).toString());
  disk.append(`${d}/two.tmp`, Buffer.from('draft'));
  disk.rename(`${d}/two.tmp`, `${d}/two`);
  disk.syncDir(d);
  seen.push(disk.list(d), disk.exists(`${d}/two`), disk.exists(`${d}/two.tmp`));
  disk.truncate(`${d}/one`, 5);
  seen.push(Buffer.from(disk.readFile(`${d}/one`)).toString());
  disk.copy(`${d}/one`, `${d}/three`);
  seen.push(Buffer.from(disk.readFile(`${d}/three`)).toString());
  disk.remove(`${d}/two`);
  seen.push(disk.list(d), disk.list(`${root}/missing`));
  try {
    disk.readFile(`${d}/nope`);
  } catch (e) {
    seen.push(e instanceof GridError ? e.code : 'other', (e as Error).message.includes('nope'));
  }
  disk.remove(`${root}/a`);
  seen.push(disk.exists(d));
  return seen;
}

test('FileDisk and SimDisk agree on the contract', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-disk-'));
  try {
    const real = exercise(new FileDisk(), root);
    const sim = exercise(new SimDisk({ seed: 1 }), 'root');
    assert.deepEqual(sim, real);
    assert.deepEqual(real[0], 11);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('FileDisk sync reports completion; append into a missing directory names the path', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-disk-'));
  try {
    const disk = new FileDisk();
    disk.append(`${root}/f`, Buffer.from('x'));
    const error = await new Promise<Error | null>((resolve) => disk.sync(`${root}/f`, resolve));
    assert.equal(error, null);
    disk.close(`${root}/f`);
    assert.throws(() => disk.append(`${root}/no/such/f`, Buffer.from('x')), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_IO' && e.message.includes(`${root}/no/such/f`));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a removed directory takes its files handles with it: a file made again there is written', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-disk-rm-'));
  try {
    for (const disk of [new FileDisk(), new SimDisk({ seed: 5 })] as Disk[]) {
      const dir = `${root}/${disk instanceof FileDisk ? 'file' : 'sim'}/g`;
      disk.makeDir(dir);
      disk.append(`${dir}/log-1`, Buffer.from('old'));
      disk.syncNow(`${dir}/log-1`);
      disk.remove(dir.slice(0, dir.lastIndexOf('/')));
      disk.makeDir(dir);
      disk.append(`${dir}/log-1`, Buffer.from('new'));
      disk.syncNow(`${dir}/log-1`);
      assert.equal(Buffer.from(disk.readFile(`${dir}/log-1`)).toString(), 'new', 'the bytes are in the file the name now has');
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('FileDisk lock: held by a running process, taken over from a dead one, released', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-lock-'));
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    const disk = new FileDisk();
    fs.writeFileSync(`${root}/.lock`, `${child.pid} another member\n`);
    assert.throws(() => disk.lock(root, 'me'), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_LOCKED' && e.message.includes(String(child.pid)));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const lock = disk.lock(root, 'me');
    assert.match(fs.readFileSync(`${root}/.lock`, 'utf8'), new RegExp(`^${process.pid} me`));
    lock.release();
    assert.equal(fs.existsSync(`${root}/.lock`), false);
    // The same process may take it again after releasing.
    disk.lock(root, 'me').release();
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('SimDisk crash keeps synced bytes, part of the unsynced ones, and tears only past the synced prefix', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const disk = new SimDisk({ seed });
    disk.makeDir('d');
    disk.append('d/f', Buffer.alloc(100, 1));
    disk.syncNow('d/f');
    disk.append('d/f', Buffer.alloc(50, 2));
    disk.append('d/f', Buffer.alloc(50, 3));
    disk.crash({ tearLastWrite: seed % 2 === 0 });
    const after = Buffer.from(disk.readFile('d/f'));
    assert.ok(after.length >= 100 && after.length <= 200);
    assert.ok(after.subarray(0, 100).equals(Buffer.alloc(100, 1)), `seed ${seed}: synced bytes survive`);
    if (seed % 2 === 1) {
      const expected = Buffer.concat([Buffer.alloc(100, 1), Buffer.alloc(50, 2), Buffer.alloc(50, 3)]).subarray(0, after.length);
      assert.ok(after.equals(expected), `seed ${seed}: without tearing, what is left is a prefix`);
    }
  }
});

test('SimDisk: a full disk refuses an append whole; a failing fsync leaves bytes unsynced; locks', async () => {
  const disk = new SimDisk({ seed: 3, capacityBytes: 10 });
  disk.makeDir('d');
  disk.append('d/f', Buffer.alloc(8));
  assert.throws(() => disk.append('d/f', Buffer.alloc(3)), /ENOSPC/);
  assert.equal(disk.size('d/f'), 8);
  disk.failSyncs = 1;
  const error = await new Promise<Error | null>((resolve) => disk.sync('d/f', resolve));
  assert.match(String(error), /EIO/);
  disk.crash();
  assert.ok(disk.size('d/f') <= 8);
  const lock = disk.lock('d', 'a');
  assert.throws(() => disk.lock('d', 'b'), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_LOCKED');
  lock.release();
  disk.lock('d', 'b');
});
