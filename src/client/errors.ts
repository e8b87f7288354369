// The error response of the client protocol (spec/client.md "Errors and moves"; facts in
// reference/client-protocol.md §7) and how Grid's own errors map onto its codes. I/O-free.
//
// Error response = message type 0, a response initial frame, then a list (begin, items, end) of
// one ErrorHolder: begin frame; a frame holding `int32 errorCode`; `String className`; nullable
// `String message`; a list of stack frames (always empty here); end frame.
//
// The codes the official clients retry (until their invocation timeout) are 19, 33, 39, 46, 47 and
// 53; Grid answers a call that must go back to the client while a partition moves with 39 or 46,
// never with a code that makes a client give up.
import { GridError, isGridError, type ErrorCode } from '../util/errors.js';
import { MessageWriter } from './message.js';

export const CLIENT_ERROR = {
  AUTHENTICATION: 3,
  INSTANCE_NOT_ACTIVE: 19,
  SERIALIZATION: 21,
  ILLEGAL_ARGUMENT: 23,
  ILLEGAL_STATE: 24,
  MEMBER_LEFT: 33,
  OPERATION_TIMEOUT: 38,
  PARTITION_MIGRATING: 39,
  RETRYABLE: 46,
  UNSUPPORTED_OPERATION: 61,
  // The CP subsystem's (reference/cp-subsystem.md §1.13).
  HAZELCAST: 18,
  ILLEGAL_MONITOR_STATE: 26,
  CP_ILLEGAL_STATE: 27,
  INDETERMINATE_OPERATION_STATE: 80,
  SESSION_EXPIRED: 85,
  CP_GROUP_DESTROYED: 89,
  CANNOT_REPLICATE: 90,
} as const;

/** The codes the official clients retry on. */
export const RETRIED_CODES: ReadonlySet<number> = new Set([19, 33, 39, 46, 47, 53]);

/** Class names the error response carries: the clients show them, they route on the code. */
const CLASS_NAMES: Readonly<Record<number, string>> = {
  3: 'grid.AuthenticationError',
  19: 'grid.MemberNotActive',
  21: 'grid.SerializationError',
  23: 'grid.IllegalArgument',
  24: 'grid.IllegalState',
  33: 'grid.MemberLeft',
  38: 'grid.OperationTimeout',
  39: 'grid.PartitionMigrating',
  46: 'grid.RetryableError',
  61: 'grid.UnsupportedOperation',
  18: 'grid.CpError',
  26: 'grid.IllegalMonitorState',
  27: 'grid.IllegalState',
  80: 'grid.IndeterminateOperationState',
  85: 'grid.SessionExpired',
  89: 'grid.CpGroupDestroyed',
  90: 'grid.CannotReplicate',
};

export const ERROR_MESSAGE_TYPE = 0;

/** The error response to the request with this correlation id. */
export function encodeErrorResponse(correlationId: bigint, code: number, message: string): Buffer {
  const writer = MessageWriter.response(ERROR_MESSAGE_TYPE, correlationId);
  const codeFrame = Buffer.alloc(4);
  codeFrame.writeInt32LE(code, 0);
  return writer
    .begin()
    .begin()
    .fixedFrame(codeFrame)
    .string(CLASS_NAMES[code] ?? 'grid.Error')
    .string(message)
    .begin()
    .end()
    .end()
    .end()
    .build();
}

/**
 * The client code for a failure of a call. Only the failures a retry can cure get a retried code:
 * a member not yet joined or shutting down, a partition moving, an owner out of reach; bad input
 * gets 23; a member-side bug 24 (a retry would fail the same way).
 */
export function clientCodeOf(error: unknown): number {
  if (!isGridError(error)) return CLIENT_ERROR.ILLEGAL_STATE;
  // spec/client.md "Errors and moves": a member shutting down answers 19 (the clients send the call
  // to another member); an operation timeout answers 38.
  if (error.failureKind === 'stopping') return CLIENT_ERROR.INSTANCE_NOT_ACTIVE;
  if (error.failureKind === 'timeout') return CLIENT_ERROR.OPERATION_TIMEOUT;
  return CODE_BY_GRID_ERROR[error.code] ?? CLIENT_ERROR.ILLEGAL_STATE;
}

const CODE_BY_GRID_ERROR: Partial<Record<ErrorCode, number>> = {
  ERR_CLUSTER_UNAVAILABLE: CLIENT_ERROR.RETRYABLE,
  ERR_DATA_RECOVERING: CLIENT_ERROR.RETRYABLE,
  ERR_DATA_CLUSTER_PASSIVE: CLIENT_ERROR.ILLEGAL_STATE,
  // The owner of a queue call left before answering. spec/client.md: never a code the clients do
  // not retry while an owner leaves; they send it again (at least once: docs/client.md).
  ERR_CLUSTER_INDETERMINATE: CLIENT_ERROR.RETRYABLE,
  ERR_DATA_QUEUE_FULL: CLIENT_ERROR.ILLEGAL_STATE,
  ERR_DATA_ENTRY_TOO_LARGE: CLIENT_ERROR.ILLEGAL_ARGUMENT,
  ERR_DATA_MISSING_KEY: CLIENT_ERROR.ILLEGAL_ARGUMENT,
  ERR_DATA_MISSING_NAME: CLIENT_ERROR.ILLEGAL_ARGUMENT,
  ERR_CLIENT_KEY_TYPE: CLIENT_ERROR.ILLEGAL_ARGUMENT,
  ERR_CLIENT_TIMEOUT: CLIENT_ERROR.OPERATION_TIMEOUT,
  ERR_CLIENT_PROTOCOL: CLIENT_ERROR.SERIALIZATION,
  ERR_WAN_QUEUE_FULL: CLIENT_ERROR.ILLEGAL_STATE,
  ERR_PERSISTENCE_IO: CLIENT_ERROR.ILLEGAL_STATE,
  // CP: 90 is retried by the clients (no leader yet, back-pressure, discovery); 91-93 never leave a member.
  ERR_CP_DISABLED: CLIENT_ERROR.HAZELCAST,
  ERR_CP_UNAVAILABLE: CLIENT_ERROR.CANNOT_REPLICATE,
  ERR_CP_INDETERMINATE: CLIENT_ERROR.INDETERMINATE_OPERATION_STATE,
  ERR_CP_BAD_REQUEST: CLIENT_ERROR.ILLEGAL_ARGUMENT,
  ERR_CP_NOT_FOUND: CLIENT_ERROR.CP_GROUP_DESTROYED,
  ERR_CP_GROUP_DESTROYED: CLIENT_ERROR.CP_GROUP_DESTROYED,
  ERR_CP_ILLEGAL_STATE: CLIENT_ERROR.CP_ILLEGAL_STATE,
  // Not the lock's owner (the only state error that maps to it: stateError in cp-api.ts).
  ERR_CP_CONFLICT: CLIENT_ERROR.ILLEGAL_MONITOR_STATE,
  ERR_CP_SESSION_EXPIRED: CLIENT_ERROR.SESSION_EXPIRED,
  ERR_CP_UNSUPPORTED: CLIENT_ERROR.UNSUPPORTED_OPERATION,
};

/** A GridError's message as the client sees it (the code's meaning when the message is empty). */
export function clientMessageOf(error: unknown): string {
  if (error instanceof GridError) return error.message === '' ? error.code : `${error.message} (${error.code})`;
  return 'internal error';
}
