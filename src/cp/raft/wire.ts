// Raft messages on the wire (carried inside the member protocol, one frame per message). Type
// numbers are append-only. Every decode is bounds-checked (util/bytes.ts): lengths are checked
// against the limits below before anything is allocated, and a malformed message is a GridError
// (ERR_PROTOCOL_MALFORMED), never a crash or a half-read message.
//
// Layout (big-endian; str = u32 length + UTF-8; bytes = u32 length + bytes; u64 < 2^53):
//   u8 type | str from | str to | u64 term | body
//   1 preVote, 3 vote:        u64 lastIndex | u64 lastTerm | (vote only) u8 transfer
//   2 preVoteAnswer, 4 voteAnswer: u8 granted
//   5 append:                 u64 prevIndex | u64 prevTerm | u64 commit | u64 round | u32 n | n × entry
//   6 appendAnswer:           u8 success | u64 index | u64 hintIndex | u64 hintTerm | u64 round
//   7 snapshot:               u64 index | u64 snapshotTerm | u32 n | n × str member | u64 offset | u64 totalBytes | bytes chunk
//   8 snapshotAnswer:         u64 index | u64 nextOffset | u64 matchIndex
//   9 timeoutNow:             (nothing)
//   entry:                    u64 index | u64 term | u8 kind (0 data, 1 noop, 2 config) | bytes data | u32 n | n × str member
import { ByteReader, ByteWriter } from '../../util/bytes.js';
import type { Entry, RaftMessage } from './types.js';

export const RAFT_TYPES = { preVote: 1, preVoteAnswer: 2, vote: 3, voteAnswer: 4, append: 5, appendAnswer: 6, snapshot: 7, snapshotAnswer: 8, timeoutNow: 9 } as const;

export interface RaftWireLimits {
  /** One entry's command, and one snapshot chunk. */
  readonly dataBytesMax: number;
  readonly entriesMax: number;
}

const ID_BYTES_MAX = 128;
const MEMBERS_MAX = 16;
const KINDS = ['data', 'noop', 'config'] as const;

export function encodeRaftMessage(m: RaftMessage): Buffer {
  const w = new ByteWriter(m.type === 'append' || m.type === 'snapshot' ? 1024 : 96);
  w.u8(RAFT_TYPES[m.type]).string(m.from, ID_BYTES_MAX).string(m.to, ID_BYTES_MAX).u64(m.term);
  switch (m.type) {
    case 'preVote':
      w.u64(m.lastIndex).u64(m.lastTerm);
      break;
    case 'vote':
      w.u64(m.lastIndex).u64(m.lastTerm).bool(m.transfer);
      break;
    case 'preVoteAnswer':
    case 'voteAnswer':
      w.bool(m.granted);
      break;
    case 'append':
      w.u64(m.prevIndex).u64(m.prevTerm).u64(m.commit).u64(m.round).u32(m.entries.length);
      for (const e of m.entries) writeEntry(w, e);
      break;
    case 'appendAnswer':
      w.bool(m.success).u64(m.index).u64(m.hintIndex).u64(m.hintTerm).u64(m.round);
      break;
    case 'snapshot':
      w.u64(m.index).u64(m.snapshotTerm);
      writeMembers(w, m.members);
      w.u64(m.offset).u64(m.totalBytes).bytes(m.chunk, 0xffff_ffff);
      break;
    case 'snapshotAnswer':
      w.u64(m.index).u64(m.nextOffset).u64(m.matchIndex);
      break;
    case 'timeoutNow':
      break;
  }
  return w.finish();
}

function writeEntry(w: ByteWriter, e: Entry): void {
  w.u64(e.index).u64(e.term).u8(KINDS.indexOf(e.kind)).bytes(e.data, 0xffff_ffff);
  writeMembers(w, e.members ?? []);
}

function writeMembers(w: ByteWriter, members: readonly string[]): void {
  w.u32(members.length);
  for (const u of members) w.string(u, ID_BYTES_MAX);
}

export function decodeRaftMessage(buf: Uint8Array, limits: RaftWireLimits): RaftMessage {
  const r = new ByteReader(buf);
  const type = r.u8();
  const from = r.string(ID_BYTES_MAX, 'from');
  const to = r.string(ID_BYTES_MAX, 'to');
  const term = r.u64();
  let m: RaftMessage;
  switch (type) {
    case RAFT_TYPES.preVote:
      m = { type: 'preVote', from, to, term, lastIndex: r.u64(), lastTerm: r.u64() };
      break;
    case RAFT_TYPES.vote:
      m = { type: 'vote', from, to, term, lastIndex: r.u64(), lastTerm: r.u64(), transfer: r.bool() };
      break;
    case RAFT_TYPES.preVoteAnswer:
      m = { type: 'preVoteAnswer', from, to, term, granted: r.bool() };
      break;
    case RAFT_TYPES.voteAnswer:
      m = { type: 'voteAnswer', from, to, term, granted: r.bool() };
      break;
    case RAFT_TYPES.append: {
      const prevIndex = r.u64();
      const prevTerm = r.u64();
      const commit = r.u64();
      const round = r.u64();
      const n = r.count(limits.entriesMax, 'entries');
      const entries: Entry[] = [];
      for (let i = 0; i < n; i++) {
        const e = readEntry(r, limits);
        if (e.index !== prevIndex + 1 + i) r.fail(`append: entry ${i} has index ${e.index}, expected ${prevIndex + 1 + i}`);
        entries.push(e);
      }
      m = { type: 'append', from, to, term, prevIndex, prevTerm, commit, round, entries };
      break;
    }
    case RAFT_TYPES.appendAnswer:
      m = { type: 'appendAnswer', from, to, term, success: r.bool(), index: r.u64(), hintIndex: r.u64(), hintTerm: r.u64(), round: r.u64() };
      break;
    case RAFT_TYPES.snapshot: {
      const index = r.u64();
      const snapshotTerm = r.u64();
      const members = readMembers(r);
      const offset = r.u64();
      const totalBytes = r.u64();
      const chunk = r.bytes(limits.dataBytesMax, 'snapshot chunk');
      if (offset + chunk.length > totalBytes) r.fail(`snapshot chunk [${offset}, ${offset + chunk.length}) beyond its ${totalBytes} bytes`);
      m = { type: 'snapshot', from, to, term, index, snapshotTerm, members, offset, totalBytes, chunk };
      break;
    }
    case RAFT_TYPES.snapshotAnswer:
      m = { type: 'snapshotAnswer', from, to, term, index: r.u64(), nextOffset: r.u64(), matchIndex: r.u64() };
      break;
    case RAFT_TYPES.timeoutNow:
      m = { type: 'timeoutNow', from, to, term };
      break;
    default:
      return r.fail(`unknown Raft message type ${type}`);
  }
  r.expectEnd('Raft message');
  return m;
}

function readEntry(r: ByteReader, limits: RaftWireLimits): Entry {
  const index = r.u64();
  const term = r.u64();
  const k = r.u8();
  const kind = KINDS[k];
  if (kind === undefined) r.fail(`unknown entry kind ${k}`);
  const data = r.bytes(limits.dataBytesMax, 'entry data');
  const members = readMembers(r);
  if (kind === 'config' && members.length === 0) r.fail('a config entry names no member');
  if (kind !== 'config' && members.length > 0) r.fail(`a ${kind} entry names members`);
  return { index, term, kind: kind as Entry['kind'], data, members: kind === 'config' ? members : null };
}

function readMembers(r: ByteReader): string[] {
  const n = r.count(MEMBERS_MAX, 'members');
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(r.string(ID_BYTES_MAX, 'member'));
  return out;
}
