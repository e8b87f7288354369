// The bytes of a map merge on the member protocol. A MAP_MERGE call (OpWire, code OP.MAP_MERGE)
// names the map in `name` and carries in `value` a policy and up to MERGE_BATCH_ENTRIES_MAX merging
// entries of one partition, each with the statistics the policies compare. The owner answers with
// how many it stored, and sends its backups one BACKUP.MAP_MERGE write whose `value` lists the
// stored records with their history, so owner and backups hold the same metadata.
//
// Both payloads use the member protocol's schema codec (positional, big-endian, bounds-checked):
//   MAP_MERGE value:        u8 policy code (merge-policy.ts), [entry]
//     entry:                bytes key, bytes value, strOrNull content type, f64 creation, f64 last
//                           update, f64 last access, f64 expiration (Infinity = never), u53 hits,
//                           u53 version, f64 own time-to-live, f64 own max-idle (ms; -1 = the
//                           map's, 0 = never: expiry.ts)
//   BACKUP.MAP_MERGE value: [record]
//     record:               bytes key, bytes value, strOrNull content type, f64 creation, f64 last
//                           update, f64 last access, u53 hits, u53 version, f64 own time-to-live,
//                           f64 own max-idle
// A decoder refuses (ERR_PROTOCOL_MALFORMED) an unknown policy, more entries than the maximum,
// times that are not finite (expiration may be +Infinity), and anything the codec refuses.
import { decodeWith, encodeWith, type TypeOf } from '../cluster/protocol/schema-codec.js';
import { GridError } from '../util/errors.js';
import { ENTRY_EXPIRY_MAP } from './expiry.js';
import { MERGE_POLICY_CODES, mergePolicyOfCode, type MergePolicyName } from './merge-policy.js';

/** Entries in one merge call: the largest `merge-policy@batch-size` the config accepts. */
export const MERGE_BATCH_ENTRIES_MAX = 10_000;

const MERGING_ENTRY = {
  key: 'bytes',
  value: 'bytes',
  contentType: 'strOrNull',
  creationTimeMs: 'f64',
  updateTimeMs: 'f64',
  lastAccessTimeMs: 'f64',
  expirationTimeMs: 'f64',
  hits: 'u53',
  version: 'u53',
  ttlMs: 'f64',
  maxIdleMs: 'f64',
} as const;

const MERGED_RECORD = {
  key: 'bytes',
  value: 'bytes',
  contentType: 'strOrNull',
  creationTimeMs: 'f64',
  updateTimeMs: 'f64',
  lastAccessTimeMs: 'f64',
  hits: 'u53',
  version: 'u53',
  ttlMs: 'f64',
  maxIdleMs: 'f64',
} as const;

export const MAP_MERGE_SCHEMA = { policy: 'u8', entries: [MERGING_ENTRY] } as const;
export const MAP_MERGE_BACKUP_SCHEMA = { records: [MERGED_RECORD] } as const;

/** An entry of the merging side, as a MAP_MERGE call carries it. */
export type MergingEntry = TypeOf<typeof MERGING_ENTRY>;
/** A record the owner stored by a merge, as its backups receive it. */
export type MergedRecord = TypeOf<typeof MERGED_RECORD>;

export interface MapMergeBatch {
  readonly policy: MergePolicyName;
  readonly entries: readonly MergingEntry[];
}

/** Bytes an entry adds to a MAP_MERGE payload (and at most to its backup write), for batch sizing. */
export function mergingEntryBytes(e: { readonly key: Uint8Array; readonly value: Uint8Array; readonly contentType: string | null }): number {
  return 73 + e.key.length + e.value.length + (e.contentType === null ? 0 : 4 + Buffer.byteLength(e.contentType));
}

/**
 * An encoded merge can remember the batch it was encoded from (`remember`, for WAN apply calls): a
 * call that runs on this member (its owner is local) gets the batch back without decoding its own
 * bytes. Only encodeMapMerge's output is registered, those bytes are never changed, and the batch
 * passed the decoder's checks when it was encoded, so the two always agree. The caller must not
 * change the batch afterwards, and its entries should carry only MergingEntry's fields.
 */
const encodedFrom = new WeakMap<Uint8Array, MapMergeBatch>();

export function encodeMapMerge(batch: MapMergeBatch, remember = false): Buffer {
  // What would not decode is not encoded: a local call skips the decoder's checks (encodedFrom).
  checkMerging(batch);
  const bytes = encodeWith(MAP_MERGE_SCHEMA, { policy: MERGE_POLICY_CODES[batch.policy], entries: batch.entries }, 256);
  if (remember) encodedFrom.set(bytes, batch);
  return bytes;
}

/**
 * The value of a merge call that runs on this member's own partition: a zero-length stand-in that
 * only this process's decoder maps back to `batch` (nothing is encoded). Checked like an encoding.
 * Were the call to reach another member after all (ownership moved at that instant), it is
 * malformed there and fails; the caller's retry encodes it (WAN: the batch is sent again).
 */
export function localMapMerge(batch: MapMergeBatch): Uint8Array {
  checkMerging(batch);
  const standIn = Buffer.alloc(0);
  encodedFrom.set(standIn, batch);
  return standIn;
}

export function decodeMapMerge(payload: Uint8Array): MapMergeBatch {
  const known = encodedFrom.get(payload);
  if (known !== undefined) return known;
  // The payload is an operation's value, a buffer of its own: entries are views into it (the store copies what it keeps).
  const raw = decodeWith(MAP_MERGE_SCHEMA, payload, 'map merge', { views: true });
  const policy = mergePolicyOfCode(raw.policy);
  if (policy === null) throw malformed(`unknown merge policy code ${raw.policy}`);
  checkCount(raw.entries.length);
  for (const e of raw.entries) {
    checkTimes(e);
    if (e.expirationTimeMs === -Infinity) throw malformed('an expiration time is -Infinity');
  }
  return { policy, entries: raw.entries };
}

export function encodeMergedRecords(records: readonly MergedRecord[]): Buffer {
  return encodeWith(MAP_MERGE_BACKUP_SCHEMA, { records }, 256);
}

export function decodeMergedRecords(payload: Uint8Array): readonly MergedRecord[] {
  const raw = decodeWith(MAP_MERGE_BACKUP_SCHEMA, payload, 'map merge backup', { views: true });
  checkCount(raw.records.length);
  for (const r of raw.records) checkTimes(r);
  return raw.records;
}

/** What decodeMapMerge checks of a batch it decodes. */
function checkMerging(batch: MapMergeBatch): void {
  checkCount(batch.entries.length);
  for (const e of batch.entries) {
    checkTimes(e);
    if (e.expirationTimeMs === -Infinity || Number.isNaN(e.expirationTimeMs)) throw malformed('an expiration time is -Infinity or not a number');
  }
}

function checkCount(n: number): void {
  if (n > MERGE_BATCH_ENTRIES_MAX) throw malformed(`${n} entries in one merge (at most ${MERGE_BATCH_ENTRIES_MAX})`);
}

function checkTimes(e: { readonly creationTimeMs: number; readonly updateTimeMs: number; readonly lastAccessTimeMs: number; readonly ttlMs: number; readonly maxIdleMs: number }): void {
  if (!Number.isFinite(e.creationTimeMs) || !Number.isFinite(e.updateTimeMs) || !Number.isFinite(e.lastAccessTimeMs)) throw malformed('an entry time is not finite');
  // An entry's own expiry: -1 (the map's), 0 (never) or a whole positive number of ms.
  for (const ms of [e.ttlMs, e.maxIdleMs]) {
    if (ms !== ENTRY_EXPIRY_MAP && !(Number.isSafeInteger(ms) && ms >= 0)) throw malformed(`an own expiry of ${ms} ms`);
  }
}

function malformed(what: string): GridError {
  return new GridError('ERR_PROTOCOL_MALFORMED', `map merge: ${what}`);
}
