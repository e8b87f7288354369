// The wire numbers and payload schemas of the operations a replica store runs: the owner
// operation codes of forwarded calls (OpWire.code), the backup operation codes (BackupOpWire.code)
// and the payloads some of them carry. Append-only: a number, once shipped, keeps its meaning.

/** Operation codes of forwarded calls (OpWire.code). Append-only wire numbers. */
export const OP = {
  MAP_GET: 1,
  MAP_PUT: 2,
  MAP_REMOVE: 3,
  MAP_CLEAR_PARTITION: 4,
  QUEUE_OFFER: 5,
  QUEUE_POLL: 6,
  QUEUE_SIZE: 7,
  MAP_PUT_IF_ABSENT: 8,
  /** Split-brain merge: store the item (key = its id in decimal) unless an item with that id and value is there. */
  QUEUE_MERGE_ADD: 9,
  /** Split-brain merge: remove the item with this id (key, decimal) and value, if it is there. */
  QUEUE_MERGE_REMOVE: 10,
  /** Merge map entries of one partition by a merge policy (value: merge-batch.ts); answers how many were stored. */
  MAP_MERGE: 11,
  /** WAN target: MAP_MERGE of events from another cluster; key = the origin cluster's name (UTF-8). */
  WAN_MAP_MERGE: 12,
  /** WAN target: delete the key; value = the origin cluster's name. */
  WAN_MAP_REMOVE: 13,
  /** WAN target: empty the map in this partition; value = the origin cluster's name. */
  WAN_MAP_CLEAR: 14,
  /** Read: hashes of Merkle-tree nodes of the map in this partition (value: MERKLE_NODES_REQUEST). */
  WAN_MERKLE_NODES: 15,
  /** Read: per-entry digests of the map under some leaves (value: LEAF_DIGESTS_REQUEST). */
  WAN_LEAF_DIGESTS: 16,
  /** A put that answers the value it replaced (null when none): the client protocol's `put`. */
  MAP_GET_AND_PUT: 17,
  /** A remove that answers the value it removed (null when none): the client protocol's `remove`. */
  MAP_GET_AND_REMOVE: 18,
  /** A put only when the key is absent, answering the value already there (null when it stored). */
  MAP_PUT_IF_ABSENT_GET: 19,
  /** Read: the map's live entries in this partition (a count). */
  MAP_SIZE_PARTITION: 20,
  /** Read: the queue's head item, left in place (a value; null when empty). */
  QUEUE_PEEK: 21,
  /** A put only when the key is present, answering the value it replaced (null: absent, nothing written). */
  MAP_REPLACE_GET: 22,
  /** A put only when the key holds the expected value (value: IF_SAME_PAYLOAD; contentType: the new value's); a flag. */
  MAP_REPLACE_IF_SAME: 23,
  /** A remove only when the key holds this value (value, contentType: the expected value); a flag. */
  MAP_REMOVE_IF_SAME: 24,
  /** Read: the map's live entries in this partition (value: one byte, ENTRIES_READ; answer: ENTRIES_ANSWER). */
  MAP_ENTRIES_PARTITION: 25,
  /** Takes up to `timeoutMs` items (the field holds the maximum; 0 = all) from the queue's head; answer: QUEUE_ITEMS_ANSWER. */
  QUEUE_DRAIN: 26,
  /** Removes every item of the queue; answers how many there were. */
  QUEUE_CLEAR: 27,
  /** A map put naming the entry's own expiry (value: PUT_EXPIRY_PAYLOAD); answers as its mode says. */
  MAP_PUT_EXPIRY: 28,
} as const;

/** MAP_PUT_EXPIRY's modes: a set (answers nothing), a put (the replaced value), a putIfAbsent (the value there; writes only when absent). */
export const PUT_MODE = { SET: 1, PUT: 2, PUT_IF_ABSENT: 3 } as const;
/** MAP_PUT_EXPIRY's value: the mode, the entry's own time-to-live and max-idle (ms; -1 the map's, 0 never), the value. */
export const PUT_EXPIRY_PAYLOAD = { mode: 'u8', ttlMs: 'f64', maxIdleMs: 'f64', value: 'bytes' } as const;
/** BACKUP.MAP_PUT_EXPIRY's value. */
export const BACKUP_PUT_EXPIRY = { ttlMs: 'f64', maxIdleMs: 'f64', value: 'bytes' } as const;

/** MAP_REPLACE_IF_SAME's value: the expected value and the new one (whose content type is the op's). */
export const IF_SAME_PAYLOAD = { expected: 'bytes', expectedType: 'strOrNull', value: 'bytes' } as const;
/** What MAP_ENTRIES_PARTITION reads: keys only, values only, or both. */
export const ENTRIES_READ = { KEYS: 1, VALUES: 2, ENTRIES: 3 } as const;
/** MAP_ENTRIES_PARTITION's answer (a key or a value it was not asked for is empty). */
export const ENTRIES_ANSWER = { entries: [{ key: 'bytes', value: 'bytes', contentType: 'strOrNull' }] } as const;
/** QUEUE_DRAIN's answer: the items taken, head first. */
export const QUEUE_ITEMS_ANSWER = { items: [{ value: 'bytes', contentType: 'strOrNull' }] } as const;
/** QUEUE_REMOVE_MANY's value: the items a drain took (their values, for a split-brain hand-back). */
export const REMOVED_ITEMS = { items: [{ id: 'u53', value: 'bytes' }] } as const;

/** Payloads of the two Merkle reads (the owner answers with a 'value' outcome holding the answer). */
export const MERKLE_NODES_REQUEST = { nodes: ['u32'] } as const;
export const MERKLE_NODES_ANSWER = { depth: 'u8', hashes: ['i32'] } as const;
export const LEAF_DIGESTS_REQUEST = { depth: 'u8', leaves: ['u32'] } as const;
export const LEAF_DIGESTS_ANSWER = { keyHashes: ['i32'], entryHashes: ['i32'] } as const;

/** Backup operation codes (BackupOpWire.code). Append-only wire numbers. */
export const BACKUP = {
  MAP_PUT: 1,
  MAP_REMOVE: 2,
  MAP_CLEAR: 3,
  QUEUE_STORE: 4,
  QUEUE_REMOVE: 5,
  /** The records a MAP_MERGE stored, with their history (value: merge-batch.ts). */
  MAP_MERGE: 6,
  /** The records a WAN_MAP_MERGE stored; key = origin cluster name. */
  WAN_MAP_MERGE: 7,
  /** WAN_MAP_REMOVE; value = origin cluster name. */
  WAN_MAP_REMOVE: 8,
  /** WAN_MAP_CLEAR; value = origin cluster name. */
  WAN_MAP_CLEAR: 9,
  /** The items a QUEUE_DRAIN took (value: REMOVED_ITEMS). */
  QUEUE_REMOVE_MANY: 10,
  /** QUEUE_CLEAR: every item of the queue removed. */
  QUEUE_CLEAR: 11,
  /** A put with the entry's own expiry (value: BACKUP_PUT_EXPIRY). */
  MAP_PUT_EXPIRY: 12,
} as const;
