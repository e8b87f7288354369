// Member-protocol message type numbers (the u16 `type` field of a frame header, frame.ts).
//
// Invariant: this list is APPEND-ONLY. A number, once shipped, keeps its meaning forever and is never
// reused, even after its message is retired (leave the constant, mark it retired in a comment): two
// members of different versions must never read the same number as two different messages.
// 0 is never a message type, so a zeroed header is always recognisably wrong. docs/protocol.md keeps
// the same table.

/** First frame of every connection, from the connecting member (handshake.ts). */
export const HANDSHAKE_REQUEST = 1;
/** The accepting member's answer to HANDSHAKE_REQUEST (handshake.ts). */
export const HANDSHAKE_RESPONSE = 2;
