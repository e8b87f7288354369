// Comparing the Merkle trees of one (map, partition) on a source and a target cluster, and the
// per-entry digest diff of a delta sync (wan.md "Synchronization"). Pure functions and a step
// machine, no I/O: a network layer sends `request` (node indices) to the other side, feeds the
// answered hashes to `step`, and repeats until the step is done: one round trip per level.
//
// Top-down: the first request is the root (or every node of `firstLevel`); each round asks only for
// the children of the nodes whose hashes differed, so a small difference costs about
// 2 × depth × (differing leaves) node hashes instead of the whole tree. Trees of different depths
// are compared at the shallower one's leaf level D = min(local depth, remote depth): with parents
// being sums (src/data/merkle-tree.ts), node i has the same range and hash in both trees for every
// level <= D. Differing leaves are reported as leaf numbers at depth D; the digest exchange then
// selects entries by the top D bits of their key hash (MapService.leafDigests with leafDepth D).
//
// Equal hashes are taken as equal content: a difference is missed only if two different entry sets
// of a subtree sum to the same 32-bit hash (about 2^-32 per differing subtree). The reference
// compares every leaf instead; `firstLevel = D` does that here, in one round of 2^D hashes.
//
// The trees may change while a comparison runs (one round per level, writes in between): pass
// `tree.snapshot()` for a fixed local view. The result is then exact for the data at the moments
// each side answered; a check is a report, and delta sync re-checks entries by digest anyway.
//
// Counts of a consistency check (wan.md; the reference's ConsistencyCheckResult):
//   checkedPartitions  partitions whose trees were compared;
//   diffPartitions     those with at least one differing leaf;
//   checkedLeaves      2^D per compared partition (a leaf under an equal subtree is checked too);
//   diffLeaves         differing leaves at depth D;
//   entriesToSync      the source's live entries under differing leaves that are missing on the
//                      target or differ from it, after the digest exchange of those leaves: exactly
//                      what a delta sync would send at that moment. Entries only on the target are
//                      not counted (sync never deletes them); diffDigests reports them as remoteOnly.
import { assert } from '../util/assert.js';
import { type MerkleTreeView, isMerkleDepth, levelStart } from '../data/merkle-tree.js';

export interface CompareResult {
  /** The level compared as leaves: the shallower tree's depth. */
  readonly depth: number;
  /** 2^depth. */
  readonly checkedLeaves: number;
  /** Leaf numbers at `depth` whose hashes differ, ascending. */
  readonly diffLeaves: readonly number[];
  /** Node hashes asked of the remote side, all rounds together. */
  readonly nodesRequested: number;
  readonly rounds: number;
}

export type CompareStep =
  | { readonly done: false; readonly request: readonly number[] }
  | { readonly done: true; readonly result: CompareResult };

export interface CompareOptions {
  /** The level of the first request (0 = the root, the default; `depth` = every leaf in one round). */
  readonly firstLevel?: number;
}

/**
 * One top-down comparison of a local tree with a remote one. `next` is the pending step: while it is
 * not done, answer `next.request` with the remote hashes of those node indices, in that order, and
 * call `step`. The caller checks that an answer from the network has one hash per requested node.
 */
export class MerkleComparison {
  readonly depth: number;
  private pending: CompareStep;
  private level: number;
  private nodesRequested = 0;
  private rounds = 0;

  constructor(
    private readonly local: MerkleTreeView,
    remoteDepth: number,
    options: CompareOptions = {},
  ) {
    assert(isMerkleDepth(local.depth) && isMerkleDepth(remoteDepth), 'Merkle depths out of range');
    this.depth = Math.min(local.depth, remoteDepth);
    const firstLevel = options.firstLevel ?? 0;
    assert(Number.isInteger(firstLevel) && firstLevel >= 0, 'firstLevel must be a non-negative integer');
    this.level = Math.min(firstLevel, this.depth);
    this.pending = this.ask(range(levelStart(this.level), levelStart(this.level + 1)));
  }

  get next(): CompareStep {
    return this.pending;
  }

  /** Takes the remote hashes of `next.request` (signed or unsigned 32-bit); returns the new `next`. */
  step(remoteHashes: ArrayLike<number>): CompareStep {
    const pending = this.pending;
    assert(!pending.done, 'the comparison is already done');
    const request = pending.request;
    assert(remoteHashes.length === request.length, 'one remote hash per requested node');
    this.rounds++;
    const differing: number[] = [];
    for (let k = 0; k < request.length; k++) {
      const index = request[k]!;
      if (this.local.node(index) !== (remoteHashes[k]! | 0)) differing.push(index);
    }
    if (this.level === this.depth || differing.length === 0) {
      const first = levelStart(this.level);
      // Breadth-first order within a level is left to right, so the leaves come out ascending.
      const diffLeaves = this.level === this.depth ? differing.map((index) => index - first) : [];
      this.pending = { done: true, result: this.result(diffLeaves) };
      return this.pending;
    }
    this.level++;
    const children: number[] = [];
    for (const index of differing) children.push(2 * index + 1, 2 * index + 2);
    this.pending = this.ask(children);
    return this.pending;
  }

  private ask(request: number[]): CompareStep {
    this.nodesRequested += request.length;
    return { done: false, request };
  }

  private result(diffLeaves: number[]): CompareResult {
    return {
      depth: this.depth,
      checkedLeaves: 2 ** this.depth,
      diffLeaves,
      nodesRequested: this.nodesRequested,
      rounds: this.rounds,
    };
  }
}

export function startCompare(local: MerkleTreeView, remoteDepth: number, options: CompareOptions = {}): MerkleComparison {
  return new MerkleComparison(local, remoteDepth, options);
}

/**
 * The remote side's answer to a request: the hashes of `nodeIndices` in its tree, in order; null
 * when an index is not a node of that tree (a malformed request: the caller answers with an error).
 */
export function answerNodeHashes(tree: MerkleTreeView, nodeIndices: readonly number[]): Int32Array | null {
  const out = new Int32Array(nodeIndices.length);
  for (let k = 0; k < nodeIndices.length; k++) {
    const index = nodeIndices[k]!;
    if (!Number.isInteger(index) || index < 0 || index >= tree.nodeCount) return null;
    out[k] = tree.node(index);
  }
  return out;
}

/** Runs a whole comparison against a tree at hand (tests, or both trees on one member). */
export function compareTrees(local: MerkleTreeView, remote: MerkleTreeView, options: CompareOptions = {}): CompareResult {
  const comparison = startCompare(local, remote.depth, options);
  let next = comparison.next;
  while (!next.done) {
    const hashes = answerNodeHashes(remote, next.request);
    assert(hashes !== null, 'a comparison only asks for nodes both trees have');
    next = comparison.step(hashes);
  }
  return next.result;
}

export interface EntryDigest {
  readonly keyHash: number;
  readonly entryHash: number;
}

export interface DigestDiff<T extends EntryDigest> {
  /** Local entries the remote side lacks or holds with another value: what a delta sync sends. */
  readonly toSync: T[];
  /** Of toSync: no remote entry has that key hash. */
  readonly missingOnRemote: number;
  /** Of toSync: a remote entry has that key hash but another entry hash. */
  readonly differing: number;
  /** Remote entries whose key hash no local entry has: only on the remote, never deleted by sync. */
  readonly remoteOnly: number;
}

/**
 * The per-entry diff of a delta sync for one set of leaves: `local` and `remote` are the digests of
 * the same leaves on the two sides. A local entry is in step when the remote holds an entry with the
 * same key hash and entry hash (the entry hash covers the key and value bytes, so that means the same
 * key and value but for a collision of both 32-bit hashes). Matching is by pairs, each remote digest
 * used at most once. Two different keys with one key hash only blur missingOnRemote / differing /
 * remoteOnly, never toSync.
 */
export function diffDigests<T extends EntryDigest>(local: readonly T[], remote: readonly EntryDigest[]): DigestDiff<T> {
  const remoteByKeyHash = new Map<number, number[]>();
  for (const digest of remote) {
    const keyHash = digest.keyHash | 0;
    const list = remoteByKeyHash.get(keyHash);
    if (list === undefined) remoteByKeyHash.set(keyHash, [digest.entryHash | 0]);
    else list.push(digest.entryHash | 0);
  }
  const localKeyHashes = new Set<number>();
  const toSync: T[] = [];
  let missingOnRemote = 0;
  let differing = 0;
  for (const digest of local) {
    const keyHash = digest.keyHash | 0;
    localKeyHashes.add(keyHash);
    const list = remoteByKeyHash.get(keyHash);
    const at = list === undefined ? -1 : list.indexOf(digest.entryHash | 0);
    if (at >= 0) {
      list!.splice(at, 1);
      continue;
    }
    toSync.push(digest);
    if (list === undefined) missingOnRemote++;
    else differing++;
  }
  let remoteOnly = 0;
  for (const [keyHash, list] of remoteByKeyHash) if (!localKeyHashes.has(keyHash)) remoteOnly += list.length;
  return { toSync, missingOnRemote, differing, remoteOnly };
}

/** The counts of a consistency check (see the top of this file). */
export interface ConsistencyCounts {
  readonly checkedPartitions: number;
  readonly diffPartitions: number;
  readonly checkedLeaves: number;
  readonly diffLeaves: number;
  readonly entriesToSync: number;
}

export const NO_CONSISTENCY_COUNTS: ConsistencyCounts = {
  checkedPartitions: 0,
  diffPartitions: 0,
  checkedLeaves: 0,
  diffLeaves: 0,
  entriesToSync: 0,
};

/** Adds one compared partition: its comparison and its entries to sync (diffDigests(...).toSync.length). */
export function addPartitionCounts(counts: ConsistencyCounts, result: CompareResult, entriesToSync: number): ConsistencyCounts {
  assert(Number.isInteger(entriesToSync) && entriesToSync >= 0, 'entriesToSync must be a non-negative integer');
  return {
    checkedPartitions: counts.checkedPartitions + 1,
    diffPartitions: counts.diffPartitions + (result.diffLeaves.length > 0 ? 1 : 0),
    checkedLeaves: counts.checkedLeaves + result.checkedLeaves,
    diffLeaves: counts.diffLeaves + result.diffLeaves.length,
    entriesToSync: counts.entriesToSync + entriesToSync,
  };
}

/** diffLeaves ÷ checkedLeaves × 100 (the reference's diff%), 0 when nothing was checked. */
export function diffPercent(counts: ConsistencyCounts): number {
  return counts.checkedLeaves === 0 ? 0 : (counts.diffLeaves / counts.checkedLeaves) * 100;
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) out.push(i);
  return out;
}
