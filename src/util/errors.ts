// One error type for operating errors. Each has a stable code (ERR_<AREA>_<WHAT>), the HTTP status a
// REST caller sees, and a one-line message. docs/errors.md lists every code; tests/unit/errors.test.ts
// keeps the registry and the document in step.

export const ERROR_CODES = {
  ERR_HTTP_BAD_PATH: { status: 400, summary: 'A path segment has a malformed percent escape or invalid UTF-8.' },
  ERR_HTTP_BAD_REQUEST: { status: 400, summary: 'The request is not understood: a missing segment, a bad number, missing parameters.' },
  ERR_HTTP_BODY_TOO_LARGE: { status: 413, summary: 'The request body is larger than `grid.rest.body.bytes.max`.' },
  ERR_HTTP_HEADERS_TOO_LARGE: { status: 431, summary: 'The request line and headers are larger than `grid.rest.header.bytes.max`.' },
  ERR_HTTP_TIMEOUT: { status: 408, summary: 'The request headers or body did not arrive within the configured timeout.' },
  ERR_HTTP_TRANSFER_CODING: { status: 501, summary: 'The request body uses a transfer coding other than `chunked` (for example `gzip, chunked`); the member decodes none.' },
  ERR_HTTP_METHOD: { status: 501, summary: 'The request method is none of GET, HEAD, POST, PUT, DELETE, OPTIONS, TRACE and PATCH.' },
  ERR_HTTP_VERSION: { status: 505, summary: 'The request is neither HTTP/1.1 nor HTTP/1.0.' },
  ERR_REST_DISABLED: { status: 403, summary: 'REST is not enabled on this member.' },
  ERR_REST_GROUP_DISABLED: { status: 403, summary: 'The endpoint group of this request is not enabled.' },
  ERR_AUTH_MISSING_PARAMETERS: { status: 400, summary: 'A management call has fewer body parameters than it needs.' },
  ERR_AUTH_UNAUTHENTICATED: { status: 403, summary: 'The cluster name or the user credentials are wrong.' },
  ERR_DATA_MISSING_KEY: { status: 400, summary: 'A map call without a key where one is required.' },
  ERR_DATA_MISSING_NAME: { status: 400, summary: 'A queue call without a queue name.' },
  ERR_DATA_BAD_TIMEOUT: { status: 400, summary: 'A queue poll timeout that is not a non-negative integer number of seconds.' },
  ERR_DATA_QUEUE_FULL: { status: 503, summary: 'The queue holds `max-size` items; the offer was refused.' },
  ERR_DATA_CLUSTER_PASSIVE: { status: 503, summary: 'The cluster is PASSIVE: only reads are allowed.' },
  ERR_DATA_RECOVERING: { status: 503, summary: 'The cluster is recovering its persisted data after a restart (`Grid-Error: recovery in progress`); data calls are answered once every expected member is back.' },
  ERR_DATA_ENTRY_TOO_LARGE: { status: 413, summary: 'A map key or value is larger than the store accepts.' },
  ERR_DATA_ANSWER_TOO_LARGE: { status: 500, summary: 'A whole-map read (keySet, values, entrySet) would answer more bytes than one answer may carry; nothing is changed.' },
  ERR_CLUSTER_UNAVAILABLE: { status: 503, summary: 'The member has not joined a cluster yet (answered at once), or the partition owner could not be reached within `grid.operation.call.timeout.millis`.' },
  ERR_CLUSTER_INDETERMINATE: { status: 503, summary: 'The member running a queue call left before answering: the call may or may not have taken effect.' },
  ERR_CLUSTER_STATE_CONFLICT: { status: 409, summary: 'A cluster-state change could not lock every member (migrations running, members changing, another change).' },
  ERR_MGMT_BAD_STATE: { status: 400, summary: 'An unknown or not requestable cluster state.' },
  ERR_MGMT_BAD_VERSION: { status: 400, summary: 'A cluster version that this member does not support.' },
  ERR_MGMT_BAD_LOG_LEVEL: { status: 400, summary: 'An unknown log level.' },
  ERR_MGMT_TCP_IP_DISABLED: { status: 400, summary: 'TCP-IP join is not enabled, so its member list cannot be read or set.' },
  ERR_MGMT_NO_LICENSE: { status: 400, summary: 'This member uses no license keys.' },
  ERR_CP_DISABLED: { status: 503, summary: 'The CP subsystem is not enabled (`cp-member-count` is 0).' },
  ERR_CP_UNAVAILABLE: { status: 503, summary: 'CP discovery is in progress, or the CP group had no leader that answered within `grid.cp.call.timeout.millis`, or it refused new writes (back-pressure); `Retry-After` says when to try again.' },
  ERR_CP_INDETERMINATE: { status: 500, summary: 'With `fail-on-indeterminate-operation-state`, a CP write whose leader went away after appending it: it may or may not have taken effect.' },
  ERR_CP_BAD_REQUEST: { status: 400, summary: 'A CP call names something that cannot be: a malformed name or number, an unknown or present CP member, the METADATA group, an unknown session, a lite member to promote, a reset not on the master.' },
  ERR_CP_NOT_FOUND: { status: 404, summary: 'No CP group has this name, this member is no CP member, or a CP session is unknown or expired.' },
  ERR_CP_CONFLICT: { status: 409, summary: 'A CP lock or semaphore call that its state refuses: not the lock\'s owner or its fence, the lock acquire limit, more permits than the session holds.' },
  ERR_CP_GROUP_DESTROYED: { status: 404, summary: 'A call named a CP group by an id that no longer exists: the group was removed, or the CP subsystem was reset since (client error 89; get the proxy again).' },
  ERR_CP_ILLEGAL_STATE: { status: 409, summary: 'A CP call the structure\'s state refuses: a countDown for a round that has not begun, a call on a destroyed latch.' },
  ERR_CP_SESSION_EXPIRED: { status: 404, summary: 'A CP session that is closed or expired (client error 85).' },
  ERR_CP_UNSUPPORTED: { status: 400, summary: 'A client CP call that runs a Java function (AtomicLong apply and alter, AtomicReference apply and alter): Grid cannot run one (client error 61).' },
  ERR_CP_PRECONDITION: { status: 412, summary: 'An AtomicReference write whose `If-Match` names another version than the current one; nothing was written.' },
  ERR_WAN_UNKNOWN: { status: 404, summary: 'No WAN replication or publisher has this name, or no sync has this id.' },
  ERR_WAN_QUEUE_FULL: { status: 503, summary: 'A map write was refused because a WAN publisher with `THROW_EXCEPTION` (or `THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE` while replicating) has a full queue; nothing was written.' },
  ERR_WAN_SYNC_RUNNING: { status: 409, summary: 'A sync was asked for a publisher that is running one, or that is STOPPED.' },
  ERR_WAN_NOT_MERKLE: { status: 400, summary: 'A consistency check was asked for a publisher whose `consistency-check-strategy` is not MERKLE_TREES.' },
  ERR_WAN_CONFIG_INVALID: { status: 400, summary: 'The JSON of `addWanConfig` is malformed, too large (64 KiB), or a field has the wrong type or value (the message names the field), or adding it would pass 64 publishers in a scheme or 256 schemes.' },
  ERR_CONFIG_INVALID: { status: 500, summary: 'A configuration value is invalid; start-up stops with exit status 2.' },
  ERR_PERSISTENCE_CORRUPT: { status: 500, summary: 'A persisted log record or metadata file failed its checksum or does not decode, and it is not a torn last write; the load stops and names the file and offset.' },
  ERR_PERSISTENCE_IO: { status: 500, summary: 'A persistence file operation failed (a full disk, a failing fsync, an unreadable or foreign directory); the message names the file.' },
  ERR_PERSISTENCE_LOCKED: { status: 500, summary: 'The persistence directory is held by another running process.' },
  ERR_PROTOCOL_FRAME_TOO_LARGE: { status: 500, summary: 'A member-protocol frame is larger than `grid.member.frame.bytes.max`; the connection is closed.' },
  ERR_PROTOCOL_MALFORMED: { status: 500, summary: 'A member-protocol frame or handshake could not be decoded; the connection is closed.' },
  ERR_CLIENT_FRAME_TOO_LARGE: { status: 500, summary: 'A client-protocol frame or message is larger than `grid.client.frame.bytes.max`; the connection is closed before it is buffered.' },
  ERR_CLIENT_PROTOCOL: { status: 500, summary: 'A client-protocol connection sent bytes that are not the protocol (no `CP2`, a bad frame length, a fragment, a field missing or not UTF-8); the connection is closed, or a call is answered with error 21.' },
  ERR_CLIENT_TIMEOUT: { status: 504, summary: 'A client `take` found no item, or a client `put` no room, within `grid.queue.poll.timeout.seconds.max` (client error 38, OPERATION_TIMEOUT).' },
  ERR_CLIENT_KEY_TYPE: { status: 400, summary: 'A client sent a map key that is not a String: Grid keys are strings (client error 23, ILLEGAL_ARGUMENT).' },
  ERR_INTERNAL: { status: 500, summary: 'An unexpected failure; the member logs it with a stack.' },
} as const satisfies Record<string, { status: number; summary: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class GridError extends Error {
  override name = 'GridError';
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds a client should wait before retrying, for 503 answers where a retry can help. */
  readonly retryAfterSeconds: number | null;
  /**
   * Why a call failed, where the code alone does not say and another interface answers it
   * differently: 'timeout' (the call's time ran out: the client protocol answers 38) or 'stopping'
   * (this member is shutting down: 19). REST answers by the code.
   */
  readonly failureKind: 'timeout' | 'stopping' | null;

  constructor(code: ErrorCode, message: string, options: { retryAfterSeconds?: number; cause?: unknown; failureKind?: 'timeout' | 'stopping' } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
    this.failureKind = options.failureKind ?? null;
  }
}

export function isGridError(e: unknown): e is GridError {
  return e instanceof GridError;
}
