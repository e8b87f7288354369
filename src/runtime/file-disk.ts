// The real Disk (src/persistence/disk.ts) on node:fs. Appends are synchronous writes to the page
// cache (microseconds; one per batch of records), fsync of the write path runs on libuv's thread pool
// (`sync`), and the rare structural steps (sealing a segment, metadata, directory entries) block.
//
// The directory lock is a file `.lock` holding the holder's pid and a description. A lock whose pid
// is no longer running (kill -9, a machine restart) is taken over; Node has no flock, and a pid that
// was reused by an unrelated process makes the lock look held (the message names the pid, and
// removing the file is the operator's way out: docs/persistence.md).
import fs from 'node:fs';
import { GridError } from '../util/errors.js';
import type { Disk, DiskLock } from '../persistence/disk.js';

const LOCK_FILE = '.lock';

export class FileDisk implements Disk {
  private readonly handles = new Map<string, number>();

  list(dir: string): string[] {
    try {
      return fs.readdirSync(dir).sort();
    } catch (e) {
      if (code(e) === 'ENOENT') return [];
      throw io(dir, e);
    }
  }

  exists(path: string): boolean {
    return fs.existsSync(path);
  }

  makeDir(dir: string): void {
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw io(dir, e);
    }
  }

  size(path: string): number {
    try {
      return fs.statSync(path).size;
    } catch (e) {
      throw io(path, e);
    }
  }

  readAt(path: string, offset: number, length: number): Uint8Array {
    let fd: number;
    try {
      fd = fs.openSync(path, 'r');
    } catch (e) {
      throw io(path, e);
    }
    try {
      const buf = Buffer.allocUnsafe(length);
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, buf, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return buf.subarray(0, got);
    } catch (e) {
      throw io(path, e);
    } finally {
      fs.closeSync(fd);
    }
  }

  readFile(path: string): Uint8Array {
    try {
      return fs.readFileSync(path);
    } catch (e) {
      throw io(path, e);
    }
  }

  append(path: string, bytes: Uint8Array): void {
    const fd = this.handle(path);
    try {
      let done = 0;
      while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
    } catch (e) {
      throw io(path, e);
    }
  }

  sync(path: string, done: (error: Error | null) => void): void {
    let fd: number;
    try {
      fd = this.handle(path);
    } catch (e) {
      queueMicrotask(() => done(e as Error));
      return;
    }
    fs.fsync(fd, (e) => done(e === null ? null : io(path, e)));
  }

  syncNow(path: string): void {
    try {
      fs.fsyncSync(this.handle(path));
    } catch (e) {
      throw e instanceof GridError ? e : io(path, e);
    }
  }

  syncDir(dir: string): void {
    let fd: number | null = null;
    try {
      fd = fs.openSync(dir, 'r');
      fs.fsyncSync(fd);
    } catch (e) {
      throw io(dir, e);
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
  }

  rename(from: string, to: string): void {
    this.close(from);
    this.close(to);
    try {
      fs.renameSync(from, to);
    } catch (e) {
      throw io(from, e);
    }
  }

  remove(path: string): void {
    this.close(path);
    // A directory goes with the files in it: their handles go too (a file written through a handle
    // kept for a removed path would be a deleted file, and its bytes lost).
    const under = path.endsWith('/') ? path : `${path}/`;
    for (const p of [...this.handles.keys()]) if (p.startsWith(under)) this.close(p);
    try {
      fs.rmSync(path, { recursive: true, force: true });
    } catch (e) {
      throw io(path, e);
    }
  }

  truncate(path: string, length: number): void {
    try {
      fs.truncateSync(path, length);
    } catch (e) {
      throw io(path, e);
    }
  }

  close(path: string): void {
    const fd = this.handles.get(path);
    if (fd === undefined) return;
    this.handles.delete(path);
    try {
      fs.closeSync(fd);
    } catch {
      // already closed: nothing to release
    }
  }

  copy(from: string, to: string): void {
    try {
      fs.copyFileSync(from, to);
      const fd = fs.openSync(to, 'r+');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch (e) {
      throw io(to, e);
    }
  }

  link(from: string, to: string): void {
    try {
      fs.linkSync(from, to);
      return;
    } catch (e) {
      const c = code(e);
      // Another file system, or one without hard links: copy instead.
      if (c !== 'EXDEV' && c !== 'EPERM' && c !== 'ENOTSUP' && c !== 'EMLINK') throw io(to, e);
    }
    this.copy(from, to);
  }

  lock(dir: string, owner: string): DiskLock {
    const path = `${dir}/${LOCK_FILE}`;
    const content = `${process.pid} ${owner}\n`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(path, content, { flag: 'wx' });
        return {
          release: () => {
            try {
              if (fs.readFileSync(path, 'utf8') === content) fs.unlinkSync(path);
            } catch {
              // gone already
            }
          },
        };
      } catch (e) {
        if (code(e) !== 'EEXIST') throw io(path, e);
      }
      const holder = readHolder(path);
      if (holder !== null && holder.pid !== process.pid && isRunning(holder.pid)) {
        throw new GridError('ERR_PERSISTENCE_LOCKED', `${dir} is in use by the running process ${holder.pid} (${holder.owner}); if that process is not a member, remove ${path}`);
      }
      try {
        fs.unlinkSync(path); // left by a process that is gone
      } catch (e) {
        if (code(e) !== 'ENOENT') throw io(path, e);
      }
    }
    throw new GridError('ERR_PERSISTENCE_LOCKED', `${dir}: another process took the lock at the same time`);
  }

  private handle(path: string): number {
    let fd = this.handles.get(path);
    if (fd === undefined) {
      try {
        fd = fs.openSync(path, 'a');
      } catch (e) {
        throw io(path, e);
      }
      this.handles.set(path, fd);
    }
    return fd;
  }
}

function readHolder(path: string): { pid: number; owner: string } | null {
  try {
    const text = fs.readFileSync(path, 'utf8');
    const space = text.indexOf(' ');
    const pid = Number(text.slice(0, space));
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, owner: text.slice(space + 1).trim() } : null;
  } catch {
    return null;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return code(e) === 'EPERM';
  }
}

function code(e: unknown): string {
  return (e as NodeJS.ErrnoException | null)?.code ?? '';
}

function io(path: string, e: unknown): GridError {
  const c = code(e);
  const message = e instanceof Error ? e.message : String(e);
  return new GridError('ERR_PERSISTENCE_IO', `${path}: ${c === '' ? message : `${c}: ${message.replace(/^[A-Z]+: /, '')}`}`, { cause: e });
}
