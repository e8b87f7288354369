// The member's persisted metadata beside its log: who it is (UUID, address), its cluster (name,
// partition count, member list), the partition table with its version, the cluster state and
// version, and when it was last alive. One small file, `member.meta`, rewritten whole and atomically
// (write a temporary file, fsync, rename, fsync the directory), so a crash leaves the old or the new
// file, never a mix.
//
// File layout: "GRIDMETA" (8 bytes), format version (u8), CRC-32C of the payload (u32 BE), payload
// length (u32 BE), payload (schema-codec encoding of METADATA). A file that fails any check is
// ERR_PERSISTENCE_CORRUPT naming it; a file of another format version is refused the same way.
import { decodeWith, encodeWith, type TypeOf } from '../cluster/protocol/schema-codec.js';
import { TABLE_SCHEMA } from '../cluster/messages.js';
import { GridError } from '../util/errors.js';
import { crc32c } from './crc32c.js';
import { joinPath, type Disk } from './disk.js';

export const METADATA_FILE = 'member.meta';
const MAGIC = Buffer.from('GRIDMETA', 'ascii');
const FORMAT_VERSION = 1;
const HEADER_BYTES = MAGIC.length + 1 + 4 + 4;
const METADATA_BYTES_MAX = 64 * 1024 * 1024;

const MEMBER_SCHEMA = { uuid: 'str', address: 'str' } as const;

const METADATA = {
  memberUuid: 'str',
  address: 'str',
  clusterName: 'str',
  partitionCount: 'u32',
  /** The member list this member last saw (itself included), with its version. */
  members: [MEMBER_SCHEMA],
  membersVersion: 'u53',
  table: TABLE_SCHEMA,
  /** ACTIVE, NO_MIGRATION, FROZEN or PASSIVE: the state to resume (never the PASSIVE of a clusterShutdown). */
  clusterState: 'str',
  clusterVersion: 'str',
  /** Wall-clock ms when this file was last written by a running member. */
  lastAliveMs: 'f64',
  /** The last backup sequence number used (backup-<seq>), 0: none. */
  backupSeq: 'u53',
} as const;

export type MemberMetadata = TypeOf<typeof METADATA>;

export function encodeMetadata(m: MemberMetadata): Buffer {
  const payload = encodeWith(METADATA, m, 4096);
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  MAGIC.copy(out, 0);
  out[MAGIC.length] = FORMAT_VERSION;
  out.writeUInt32BE(crc32c(payload), MAGIC.length + 1);
  out.writeUInt32BE(payload.length, MAGIC.length + 5);
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** Decodes a metadata file's bytes; `file` names it in errors. */
export function decodeMetadata(bytes: Uint8Array, file: string): MemberMetadata {
  const bad = (why: string): never => {
    throw new GridError('ERR_PERSISTENCE_CORRUPT', `${file}: not a readable member metadata file: ${why}`);
  };
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (b.length < HEADER_BYTES || !b.subarray(0, MAGIC.length).equals(MAGIC)) bad('it does not start with GRIDMETA');
  if (b[MAGIC.length] !== FORMAT_VERSION) bad(`format version ${b[MAGIC.length]}, this member reads ${FORMAT_VERSION}`);
  const crc = b.readUInt32BE(MAGIC.length + 1);
  const length = b.readUInt32BE(MAGIC.length + 5);
  if (length > METADATA_BYTES_MAX || HEADER_BYTES + length !== b.length) bad(`a payload of ${length} bytes in a file of ${b.length}`);
  const payload = b.subarray(HEADER_BYTES);
  if (crc32c(payload) !== crc) bad('its checksum does not match');
  try {
    return decodeWith(METADATA, payload, 'member metadata');
  } catch (e) {
    return bad((e as Error).message);
  }
}

/** Reads `dir/member.meta`; null when there is none. */
export function readMetadata(disk: Disk, dir: string): MemberMetadata | null {
  const path = joinPath(dir, METADATA_FILE);
  if (!disk.exists(path)) return null;
  return decodeMetadata(disk.readFile(path), path);
}

/** Replaces `dir/member.meta` atomically and durably. */
export function writeMetadata(disk: Disk, dir: string, m: MemberMetadata): void {
  const path = joinPath(dir, METADATA_FILE);
  const tmp = `${path}.tmp`;
  if (disk.exists(tmp)) disk.remove(tmp);
  disk.append(tmp, encodeMetadata(m));
  disk.syncNow(tmp);
  disk.close(tmp);
  disk.rename(tmp, path);
  disk.syncDir(dir);
}
