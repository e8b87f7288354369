// The member-protocol side of a port. This version forms no clusters yet: it reads the preamble and
// the handshake frame through the bounded frame reader, answers with a refusal ("not clustered yet",
// or the mismatch it found), and closes. Oversized or malformed frames close the connection and are
// counted; nothing a peer sends can stop this member.
import type { Socket } from 'node:net';
import type { Config } from '../config/types.js';
import { FrameReader } from '../cluster/protocol/frame-reader.js';
import { encodeFrame, FLAG_RESPONSE, PREAMBLE, PROTOCOL_VERSION, PROTOCOL_VERSION_MIN } from '../cluster/protocol/frame.js';
import { answerHandshake, decodeHandshakeRequest, encodeHandshakeResponse, HANDSHAKE_FRAME_BYTES_MAX, isHardRefusal } from '../cluster/protocol/handshake.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../cluster/protocol/message-types.js';
import { isGridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';
import { MEMBER_VERSION } from '../member/version.js';

/** A peer must send its handshake this soon after connecting. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

export class MemberPort {
  private readonly sockets = new Set<Socket>();
  readonly counters = { handshakesRefused: 0, framesRejected: 0 };

  constructor(
    private readonly config: Config,
    private readonly memberUuid: string,
    private readonly log: ComponentLogger,
  ) {}

  get connectionCount(): number {
    return this.sockets.size;
  }

  accept(socket: Socket, head: Buffer): void {
    this.sockets.add(socket);
    // Until the peer has identified itself, only a handshake-sized frame is accepted.
    const reader = new FrameReader({ frameBytesMax: Math.min(HANDSHAKE_FRAME_BYTES_MAX, this.config.properties.memberFrameBytesMax) });
    const timer = setTimeout(() => socket.destroy(), HANDSHAKE_TIMEOUT_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      this.sockets.delete(socket);
    });
    const onBytes = (chunk: Buffer): void => {
      try {
        reader.append(chunk);
        const frame = reader.next();
        if (frame === null) return;
        socket.removeListener('data', onBytes);
        clearTimeout(timer);
        if (frame.messageType !== HANDSHAKE_REQUEST) {
          this.reject(socket, `first frame has message type ${frame.messageType}, expected a handshake`);
          return;
        }
        this.answer(socket, decodeHandshakeRequest(frame.payload), frame.callId);
      } catch (e) {
        if (!isGridError(e)) throw e;
        this.reject(socket, e.message);
      }
    };
    socket.on('data', onBytes);
    onBytes(head);
    socket.resume();
  }

  private answer(socket: Socket, request: ReturnType<typeof decodeHandshakeRequest>, callId: number): void {
    const response = answerHandshake(request, {
      clusterName: this.config.clusterName,
      memberUuid: this.memberUuid,
      memberVersion: MEMBER_VERSION,
      protocolVersionMin: PROTOCOL_VERSION_MIN,
      protocolVersionMax: PROTOCOL_VERSION,
      partitionCount: this.config.properties.partitionCount,
    });
    if (response.kind === 'refused') {
      this.counters.handshakesRefused++;
      const line = `handshake from member ${request.memberUuid} (${request.addresses.map((a) => `${a.host}:${a.port}`).join(', ') || 'no address'}) refused: ${response.reason}: ${response.message}`;
      if (isHardRefusal(response.reason)) this.log.warning(line);
      else this.log.info(line);
    }
    const payload = encodeHandshakeResponse(response);
    socket.write(PREAMBLE);
    socket.end(encodeFrame({ messageType: HANDSHAKE_RESPONSE, flags: FLAG_RESPONSE, callId }, payload));
  }

  private reject(socket: Socket, reason: string): void {
    this.counters.framesRejected++;
    this.log.warning(`member-protocol connection from ${socket.remoteAddress ?? '?'} closed: ${reason}`);
    socket.destroy();
  }

  closeAll(): void {
    for (const s of this.sockets) s.destroy();
  }
}
