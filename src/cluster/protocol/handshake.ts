// The handshake: the first frame of every member connection (HANDSHAKE_REQUEST) and its answer
// (HANDSHAKE_RESPONSE). Payload codecs plus the pure decision of how this member answers.
//
// Invariants:
// - Every field is bounded (the *_MAX constants) and validated on decode: a bad field is
//   ERR_PROTOCOL_MALFORMED and the connection closes. Encoding a bad field is a programmer error.
// - Refusal reasons are append-only wire numbers, like message types. CLUSTER_NAME_MISMATCH is soft
//   (the peer is foreign: both keep running, the caller may retry later); VERSION_MISMATCH,
//   PARTITION_COUNT_MISMATCH and AUTHENTICATION_FAILED are hard (log it loudly). NOT_CLUSTERED_YET
//   (soft) was answered by members that formed no clusters; it is no longer sent but keeps its
//   number. No refusal ever makes a member shut itself down (cluster.md).
// - A refusal never echoes this member's cluster name: with security off it acts as a password.
// - Layout v1 must stay decodable by every later member, so a newer member can always be told apart
//   (and refused with VERSION_MISMATCH) instead of being misread.
import { AssertionError } from '../../util/assert.js';
import { ByteReader, ByteWriter } from '../../util/bytes.js';
import { GridError } from '../../util/errors.js';
import { HEADER_BYTES } from './frame.js';

export const CLUSTER_NAME_BYTES_MAX = 256;
export const MEMBER_VERSION_BYTES_MAX = 64;
export const ADDRESSES_MAX = 16;
export const HOST_BYTES_MAX = 255;
export const USERNAME_BYTES_MAX = 256;
export const PASSWORD_BYTES_MAX = 1024;
export const MESSAGE_BYTES_MAX = 1024;
const UUID_BYTES = 36;
/** Length prefix of a string on the wire (u32). */
const STRING_PREFIX_BYTES = 4;

/**
 * The largest frame a valid handshake request can be, from the field limits above (≈ 5.9 KiB). The
 * first frame of a connection is read with this cap, not the configured frame limit: a peer that has
 * not identified itself must not be able to make this member hold megabytes.
 */
export const HANDSHAKE_FRAME_BYTES_MAX =
  HEADER_BYTES +
  2 + // protocol version min, max
  STRING_PREFIX_BYTES + CLUSTER_NAME_BYTES_MAX +
  STRING_PREFIX_BYTES + UUID_BYTES +
  STRING_PREFIX_BYTES + MEMBER_VERSION_BYTES_MAX +
  4 + // partition count
  4 + ADDRESSES_MAX * (STRING_PREFIX_BYTES + HOST_BYTES_MAX + 2) +
  1 + // identity present
  STRING_PREFIX_BYTES + USERNAME_BYTES_MAX +
  STRING_PREFIX_BYTES + PASSWORD_BYTES_MAX;

export interface MemberAddress {
  readonly host: string;
  readonly port: number;
}

export interface Identity {
  readonly username: string;
  readonly password: string;
}

export interface HandshakeRequest {
  /** Range of protocol versions the connecting member speaks (inclusive). */
  readonly protocolVersionMin: number;
  readonly protocolVersionMax: number;
  readonly clusterName: string;
  /** Canonical UUID text, 8-4-4-4-12 hex digits. */
  readonly memberUuid: string;
  /** major.minor.patch with an optional -prerelease. */
  readonly memberVersion: string;
  readonly partitionCount: number;
  /** Addresses where the connecting member accepts connections, best first. */
  readonly addresses: readonly MemberAddress[];
  /** Credentials when security is on, else null. */
  readonly identity: Identity | null;
}

/** Wire numbers of refusal reasons: append-only, never reused. */
export const REFUSAL_CODES = {
  CLUSTER_NAME_MISMATCH: 1,
  VERSION_MISMATCH: 2,
  PARTITION_COUNT_MISMATCH: 3,
  /** Retired: sent only by members that formed no clusters (0.1.0 before clustering); decoded, never sent. */
  NOT_CLUSTERED_YET: 4,
  /** Security is on here and the peer presented no credentials, or credentials that were not accepted. */
  AUTHENTICATION_FAILED: 5,
} as const;
export type RefusalReason = keyof typeof REFUSAL_CODES;

export type HandshakeResponse =
  | { readonly kind: 'accepted'; readonly memberUuid: string; readonly memberVersion: string; readonly protocolVersion: number }
  | { readonly kind: 'refused'; readonly memberUuid: string; readonly memberVersion: string; readonly reason: RefusalReason; readonly message: string };

/** What this member knows about itself to answer a handshake. */
export interface HandshakeLocal {
  readonly clusterName: string;
  readonly memberUuid: string;
  readonly memberVersion: string;
  readonly protocolVersionMin: number;
  readonly protocolVersionMax: number;
  readonly partitionCount: number;
  /**
   * Security on: the peer must present credentials that `checkIdentity` accepts (default: any
   * credentials). Off (default): credentials, if any, are ignored.
   */
  readonly identityRequired?: boolean;
  readonly checkIdentity?: (identity: Identity) => boolean;
}

export function isHardRefusal(reason: RefusalReason): boolean {
  return reason === 'VERSION_MISMATCH' || reason === 'PARTITION_COUNT_MISMATCH' || reason === 'AUTHENTICATION_FAILED';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const VERSION = /^(\d{1,9})\.(\d{1,9})\.\d{1,9}(?:-[0-9A-Za-z.-]{1,40})?$/;
const HOST = /^[^\x00-\x20\x7f]+$/;
const OUTCOME_ACCEPTED = 0;
const OUTCOME_REFUSED = 1;

export function encodeHandshakeRequest(r: HandshakeRequest): Buffer {
  checkRequest(r, assertFail);
  const w = new ByteWriter(128);
  w.u8(r.protocolVersionMin).u8(r.protocolVersionMax);
  w.string(r.clusterName, CLUSTER_NAME_BYTES_MAX).string(r.memberUuid, UUID_BYTES).string(r.memberVersion, MEMBER_VERSION_BYTES_MAX);
  w.u32(r.partitionCount);
  w.u32(r.addresses.length);
  for (const a of r.addresses) w.string(a.host, HOST_BYTES_MAX).u16(a.port);
  w.bool(r.identity !== null);
  if (r.identity !== null) w.string(r.identity.username, USERNAME_BYTES_MAX).string(r.identity.password, PASSWORD_BYTES_MAX);
  return w.finish();
}

export function decodeHandshakeRequest(payload: Uint8Array): HandshakeRequest {
  const rd = new ByteReader(payload);
  const protocolVersionMin = rd.u8();
  const protocolVersionMax = rd.u8();
  const clusterName = rd.string(CLUSTER_NAME_BYTES_MAX, 'cluster name');
  const memberUuid = rd.string(UUID_BYTES, 'member uuid');
  const memberVersion = rd.string(MEMBER_VERSION_BYTES_MAX, 'member version');
  const partitionCount = rd.u32();
  const n = rd.count(ADDRESSES_MAX, 'address count');
  const addresses: MemberAddress[] = [];
  for (let i = 0; i < n; i++) addresses.push({ host: rd.string(HOST_BYTES_MAX, 'host'), port: rd.u16() });
  const identity = rd.bool()
    ? { username: rd.string(USERNAME_BYTES_MAX, 'username'), password: rd.string(PASSWORD_BYTES_MAX, 'password') }
    : null;
  rd.expectEnd('handshake request');
  const r: HandshakeRequest = { protocolVersionMin, protocolVersionMax, clusterName, memberUuid, memberVersion, partitionCount, addresses, identity };
  checkRequest(r, malformed);
  return r;
}

export function encodeHandshakeResponse(r: HandshakeResponse): Buffer {
  checkMember(r.memberUuid, r.memberVersion, assertFail);
  const w = new ByteWriter(64);
  w.u8(r.kind === 'accepted' ? OUTCOME_ACCEPTED : OUTCOME_REFUSED);
  w.string(r.memberUuid, UUID_BYTES).string(r.memberVersion, MEMBER_VERSION_BYTES_MAX);
  if (r.kind === 'accepted') w.u8(r.protocolVersion);
  else w.u8(REFUSAL_CODES[r.reason]).string(r.message, MESSAGE_BYTES_MAX);
  return w.finish();
}

export function decodeHandshakeResponse(payload: Uint8Array): HandshakeResponse {
  const rd = new ByteReader(payload);
  const outcome = rd.u8();
  if (outcome !== OUTCOME_ACCEPTED && outcome !== OUTCOME_REFUSED) malformed(`handshake outcome ${outcome}`);
  const memberUuid = rd.string(UUID_BYTES, 'member uuid');
  const memberVersion = rd.string(MEMBER_VERSION_BYTES_MAX, 'member version');
  checkMember(memberUuid, memberVersion, malformed);
  let response: HandshakeResponse;
  if (outcome === OUTCOME_ACCEPTED) {
    const protocolVersion = rd.u8();
    if (protocolVersion === 0) malformed('accepted protocol version 0');
    response = { kind: 'accepted', memberUuid, memberVersion, protocolVersion };
  } else {
    const code = rd.u8();
    const reason = reasonOf(code);
    if (reason === null) malformed(`unknown refusal reason ${code}`);
    response = { kind: 'refused', memberUuid, memberVersion, reason, message: rd.string(MESSAGE_BYTES_MAX, 'message') };
  }
  rd.expectEnd('handshake response');
  return response;
}

/**
 * How this member answers a decoded request. Checks run from "the peer is not ours at all" to
 * "ours but incompatible", then "ours but not authenticated"; a compatible peer is accepted with the
 * highest protocol version both speak.
 */
export function answerHandshake(req: HandshakeRequest, local: HandshakeLocal): HandshakeResponse {
  const me = { memberUuid: local.memberUuid, memberVersion: local.memberVersion };
  const refuse = (reason: RefusalReason, message: string): HandshakeResponse => ({ kind: 'refused', ...me, reason, message });
  if (req.clusterName !== local.clusterName) return refuse('CLUSTER_NAME_MISMATCH', 'cluster name does not match');
  const low = Math.max(req.protocolVersionMin, local.protocolVersionMin);
  const high = Math.min(req.protocolVersionMax, local.protocolVersionMax);
  if (low > high) {
    return refuse('VERSION_MISMATCH',
      `protocol versions ${req.protocolVersionMin}..${req.protocolVersionMax} do not overlap ${local.protocolVersionMin}..${local.protocolVersionMax}`);
  }
  if (majorMinor(req.memberVersion) !== majorMinor(local.memberVersion)) {
    return refuse('VERSION_MISMATCH', `member version ${req.memberVersion} differs from ${local.memberVersion} in major.minor`);
  }
  if (req.partitionCount !== local.partitionCount) {
    return refuse('PARTITION_COUNT_MISMATCH', `partition count ${req.partitionCount} differs from this member's ${local.partitionCount}`);
  }
  if (local.identityRequired === true) {
    const check = local.checkIdentity ?? ((): boolean => true);
    // The message never says which part was wrong, nor what was expected.
    if (req.identity === null) return refuse('AUTHENTICATION_FAILED', 'security is enabled on this member and the handshake carried no credentials');
    if (!check(req.identity)) return refuse('AUTHENTICATION_FAILED', 'the member credentials were not accepted');
  }
  return { kind: 'accepted', ...me, protocolVersion: high };
}

type Fail = (message: string) => never;

function checkRequest(r: HandshakeRequest, fail: Fail): void {
  const { protocolVersionMin: lo, protocolVersionMax: hi } = r;
  if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 1 && lo <= hi && hi <= 0xff)) fail(`protocol version range ${lo}..${hi}`);
  checkMember(r.memberUuid, r.memberVersion, fail);
  if (r.clusterName.length === 0) fail('empty cluster name');
  if (!(Number.isInteger(r.partitionCount) && r.partitionCount >= 1 && r.partitionCount <= 0x7fff_ffff)) fail(`partition count ${r.partitionCount}`);
  if (r.addresses.length > ADDRESSES_MAX) fail(`more than ${ADDRESSES_MAX} addresses`);
  for (const a of r.addresses) {
    if (!HOST.test(a.host)) fail('an address has an empty host or one with spaces or control characters');
    if (!(Number.isInteger(a.port) && a.port >= 1 && a.port <= 0xffff)) fail(`address port ${a.port}`);
  }
}

function checkMember(uuid: string, version: string, fail: Fail): void {
  if (!UUID.test(uuid)) fail('member uuid is not a canonical UUID');
  if (!VERSION.test(version)) fail('member version is not major.minor.patch');
}

function majorMinor(version: string): string {
  const m = VERSION.exec(version);
  return m === null ? version : `${Number(m[1])}.${Number(m[2])}`;
}

function reasonOf(code: number): RefusalReason | null {
  for (const [name, value] of Object.entries(REFUSAL_CODES)) if (value === code) return name as RefusalReason;
  return null;
}

function malformed(message: string): never {
  throw new GridError('ERR_PROTOCOL_MALFORMED', `handshake: ${message}`);
}

function assertFail(message: string): never {
  throw new AssertionError(`handshake: ${message}`);
}
