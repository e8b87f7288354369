// The Merkle tree of one map in one partition (wan.md "Synchronization"): a perfect binary tree whose
// 2^depth leaves split the 32-bit key-hash range evenly, the leaf of an entry being the top `depth`
// bits of its unsigned key hash. A leaf's hash is the wrapping sum (mod 2^32) of its entries'
// contributions, entryHash × ENTRY_WEIGHT, and an inner node's hash is the wrapping sum of its two
// children. So a tree depends only on the set of entries it holds, never on the order they came in,
// and one add or remove costs depth + 1 additions.
//
// Because parents are plain sums, node i covers the same key-hash range and has the same hash in
// every tree of depth >= level(i) holding the same entries: trees of different depths are compared
// node by node down to the shallower tree's leaf level (src/wan/merkle-compare.ts).
//
// Hashes, the same function of the bytes on every cluster (a change here is a WAN-compatibility
// break, since two clusters then disagree on every leaf):
//   keyHash   = MurmurHash3_x86_32(key bytes, seed MERKLE_KEY_HASH_SEED), a signed int32. The map
//               store uses this very hash for its in-partition index, so records carry it and the
//               write path hashes the key once. It is NOT the partition hash (partition-id.ts): that
//               one's bits chose the partition, and every key of a partition shares them.
//   entryHash = MurmurHash3_x86_32(key bytes ‖ value bytes, seed keyHash): covers both byte strings;
//               seeding with the key hash separates ("ab","c") from ("a","bc"). The store keeps key
//               and value contiguous, so it hashes the stored bytes in one pass without copying.
// Content type and record metadata (times, version, hits) are not part of the hash.
//
// Layout: the nodes are one Int32Array in breadth-first order, root 0, children of i at 2i+1 and
// 2i+2; level l holds nodes [2^l - 1, 2^(l+1) - 1); the leaves are level `depth`.
// Invariants: node(i) = node(2i+1) + node(2i+2) (mod 2^32) for every inner node; an empty tree is
// all zeros; `entryCount` = entries added - entries removed.
import { assert } from '../util/assert.js';
import { murmurHash3x86 } from '../partition/murmur3.js';

export const MERKLE_DEPTH_MIN = 2;
/** 2^21 - 1 nodes, 8 MiB per (map, partition): deeper trees cost more memory than they save bytes. */
export const MERKLE_DEPTH_MAX = 20;
export const MERKLE_DEPTH_DEFAULT = 10;
export const MERKLE_KEY_HASH_SEED = 0x2f8a1c3b;
/** A large odd constant: multiplying by it is a bijection mod 2^32 that spreads low-entropy sums. */
const ENTRY_WEIGHT = 0x9e3779b1;

/** The key hash of the Merkle leaves (and of the store's index): a signed int32. */
export function merkleKeyHash(key: Uint8Array): number {
  return murmurHash3x86(key, MERKLE_KEY_HASH_SEED);
}

/** The entry hash of a record whose key bytes followed by value bytes are `bytes[start, end)`. */
export function merkleEntryHash(keyHash: number, bytes: Uint8Array, start: number, end: number): number {
  return murmurHash3x86(bytes, keyHash, start, end);
}

/** The entry hash of a key and value held apart (copies them; the store hashes its bytes in place). */
export function merkleEntryHashOf(key: Uint8Array, value: Uint8Array): number {
  const bytes = new Uint8Array(key.length + value.length);
  bytes.set(key, 0);
  bytes.set(value, key.length);
  return merkleEntryHash(merkleKeyHash(key), bytes, 0, bytes.length);
}

export function isMerkleDepth(depth: number): boolean {
  return Number.isInteger(depth) && depth >= MERKLE_DEPTH_MIN && depth <= MERKLE_DEPTH_MAX;
}

/**
 * The leaf of a key hash in a tree of `depth` (0 = the whole range, leaf 0): its top `depth` bits.
 * Also the index, within level `depth`, of the node covering that key hash in any deeper tree.
 */
export function leafAtDepth(keyHash: number, depth: number): number {
  return depth === 0 ? 0 : (keyHash >>> 0) >>> (32 - depth);
}

/** The index of the first node of level `level` (breadth-first order). */
export function levelStart(level: number): number {
  return (1 << level) - 1;
}

/** What a comparison reads of a tree (src/wan/merkle-compare.ts); MerkleTree and snapshots have it. */
export interface MerkleTreeView {
  readonly depth: number;
  readonly leafCount: number;
  readonly nodeCount: number;
  /** The hash of node `index` as a signed int32. */
  node(index: number): number;
}

export class MerkleTree implements MerkleTreeView {
  readonly depth: number;
  readonly leafCount: number;
  readonly nodeCount: number;
  entryCount = 0;
  private readonly nodes: Int32Array;
  private readonly firstLeaf: number;
  private readonly leafShift: number;

  constructor(depth: number) {
    assert(isMerkleDepth(depth), `Merkle tree depth must be an integer in [${MERKLE_DEPTH_MIN}, ${MERKLE_DEPTH_MAX}]`);
    this.depth = depth;
    this.leafCount = 1 << depth;
    this.nodeCount = 2 * this.leafCount - 1;
    this.nodes = new Int32Array(this.nodeCount);
    this.firstLeaf = this.leafCount - 1;
    this.leafShift = 32 - depth;
  }

  /** The leaf (0 .. leafCount - 1) whose key-hash range holds `keyHash`. */
  leafOf(keyHash: number): number {
    return (keyHash >>> 0) >>> this.leafShift;
  }

  add(keyHash: number, entryHash: number): void {
    this.addToPath(keyHash, Math.imul(entryHash, ENTRY_WEIGHT));
    this.entryCount++;
  }

  /** Takes back an earlier add of the same (keyHash, entryHash); the caller knows it was added. */
  remove(keyHash: number, entryHash: number): void {
    assert(this.entryCount > 0, 'removing from an empty Merkle tree');
    this.addToPath(keyHash, -Math.imul(entryHash, ENTRY_WEIGHT) | 0);
    this.entryCount--;
  }

  /** An entry of `keyHash` changed from `oldEntryHash` to `newEntryHash`: remove + add in one walk. */
  replace(keyHash: number, oldEntryHash: number, newEntryHash: number): void {
    assert(this.entryCount > 0, 'replacing in an empty Merkle tree');
    this.addToPath(keyHash, (Math.imul(newEntryHash, ENTRY_WEIGHT) - Math.imul(oldEntryHash, ENTRY_WEIGHT)) | 0);
  }

  clear(): void {
    this.nodes.fill(0);
    this.entryCount = 0;
  }

  node(index: number): number {
    assert(Number.isInteger(index) && index >= 0 && index < this.nodeCount, 'Merkle node index out of range');
    return this.nodes[index]!;
  }

  root(): number {
    return this.nodes[0]!;
  }

  leafHash(leaf: number): number {
    return this.node(this.firstLeaf + leaf);
  }

  /** A view (no copy) of the 2^level hashes of one level, left to right. Read-only: never write into it. */
  level(level: number): Int32Array {
    assert(Number.isInteger(level) && level >= 0 && level <= this.depth, 'Merkle level out of range');
    return this.nodes.subarray(levelStart(level), levelStart(level + 1));
  }

  /** A copy that later changes of this tree do not reach (a consistent view for a comparison). */
  snapshot(): MerkleTree {
    const copy = new MerkleTree(this.depth);
    copy.nodes.set(this.nodes);
    copy.entryCount = this.entryCount;
    return copy;
  }

  /** Every node equal (depths included). */
  equals(other: MerkleTree): boolean {
    if (other.depth !== this.depth) return false;
    for (let i = 0; i < this.nodeCount; i++) if (this.nodes[i] !== other.nodes[i]) return false;
    return true;
  }

  /** Adds `delta` (wrapping) to the leaf of `keyHash` and to each of its ancestors. */
  private addToPath(keyHash: number, delta: number): void {
    const nodes = this.nodes;
    let i = this.firstLeaf + ((keyHash >>> 0) >>> this.leafShift);
    for (;;) {
      nodes[i] = nodes[i]! + delta; // an Int32Array store wraps mod 2^32
      if (i === 0) return;
      i = (i - 1) >>> 1;
    }
  }
}
