// Names of the log's segment files, and what a directory listing means at start-up. No I/O.
//
//   seg-<first>.open          the segment being appended to (at most one; the only one that may end
//                             in a torn write)
//   seg-<first>-<last>.log    a sealed segment: records with sequence numbers in [first, last],
//                             synced before it got this name; a compaction's output gets the range
//                             of the run of segments it replaces (it may hold fewer records, or none)
//   *.tmp                     a file being written (compaction output, metadata): never read
// Numbers are zero-padded to 16 decimal digits, so names sort as sequence numbers do.
//
// Invariants that make replay simple (recovery.ts): sealed ranges never overlap except when one
// contains another (a compaction's output written, its inputs not yet deleted: the inputs are
// superseded), and the open segment starts after every sealed range. So replaying the surviving
// segments in name order replays every record in sequence order.

const DIGITS = 16;
const SEQ_MAX = 10 ** DIGITS - 1;

export interface SealedSegment {
  readonly name: string;
  readonly first: number;
  readonly last: number;
}

export interface SegmentListing {
  /** Sealed segments to replay, in sequence order. */
  readonly sealed: readonly SealedSegment[];
  /** The open segment, if any, with its first sequence number. */
  readonly open: { readonly name: string; readonly first: number } | null;
  /** Files to delete: leftovers of an interrupted write or compaction. */
  readonly obsolete: readonly string[];
  /** Names in the log directory that are not the log's (left alone, reported). */
  readonly foreign: readonly string[];
}

function pad(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0 || n > SEQ_MAX) throw new RangeError(`sequence number out of range: ${n}`);
  return String(n).padStart(DIGITS, '0');
}

export function sealedName(first: number, last: number): string {
  return `seg-${pad(first)}-${pad(last)}.log`;
}

export function openName(first: number): string {
  return `seg-${pad(first)}.open`;
}

export function tempName(base: string): string {
  return `${base}.tmp`;
}

const SEALED = /^seg-(\d{16})-(\d{16})\.log$/;
const OPEN = /^seg-(\d{16})\.open$/;

/**
 * Sorts a log directory's names into what to replay and what to delete. Throws a plain Error
 * (the caller names the directory) when the files cannot come from this log: two open segments,
 * sealed ranges that cross, or an open segment that does not start after the sealed ones.
 */
export function planListing(names: readonly string[]): SegmentListing {
  const sealed: SealedSegment[] = [];
  const opens: { name: string; first: number }[] = [];
  const obsolete: string[] = [];
  const foreign: string[] = [];
  for (const name of names) {
    const s = SEALED.exec(name);
    if (s !== null) {
      const first = Number(s[1]);
      const last = Number(s[2]);
      if (last < first) throw new Error(`segment ${name} ends before it starts`);
      sealed.push({ name, first, last });
      continue;
    }
    const o = OPEN.exec(name);
    if (o !== null) {
      opens.push({ name, first: Number(o[1]) });
      continue;
    }
    if (name.endsWith('.tmp')) obsolete.push(name);
    else foreign.push(name);
  }
  if (opens.length > 1) throw new Error(`more than one open segment: ${opens.map((o) => o.name).join(', ')}`);
  // Widest first among equal starts, so a compaction's output comes before the inputs it covers.
  sealed.sort((a, b) => a.first - b.first || b.last - a.last);
  const kept: SealedSegment[] = [];
  for (const s of sealed) {
    const prev = kept[kept.length - 1];
    if (prev !== undefined && s.first <= prev.last) {
      if (s.last <= prev.last) {
        obsolete.push(s.name); // inside a compaction's output: superseded
        continue;
      }
      throw new Error(`segments ${prev.name} and ${s.name} overlap`);
    }
    kept.push(s);
  }
  const open = opens[0] ?? null;
  const lastSealed = kept[kept.length - 1];
  if (open !== null && lastSealed !== undefined && open.first <= lastSealed.last) throw new Error(`open segment ${open.name} starts inside ${lastSealed.name}`);
  return { sealed: kept, open, obsolete, foreign };
}
