// A valid handshake request from a compatible member of cluster `dev`, for tests to vary, and a raw
// exchange that reads the first frame a member answers (accepted connections stay open, so the
// exchange cannot wait for the close).
import net from 'node:net';
import tls from 'node:tls';
import type { HandshakeRequest } from '../../src/cluster/protocol/handshake.js';
import { PROTOCOL_VERSION, PROTOCOL_VERSION_MIN, type Frame } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';

export function sampleHandshake(overrides: Partial<HandshakeRequest> = {}): HandshakeRequest {
  return {
    protocolVersionMin: PROTOCOL_VERSION_MIN,
    protocolVersionMax: PROTOCOL_VERSION,
    clusterName: 'dev',
    memberUuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
    memberVersion: '0.1.0',
    partitionCount: 271,
    addresses: [{ host: '127.0.0.1', port: 5701 }],
    identity: null,
    ...overrides,
  };
}

/**
 * Connects (with TLS when `tlsOptions` is given), writes `bytes`, and resolves with the first whole
 * frame of the answer (after its preamble), then closes. Rejects when the member closes first or the
 * deadline passes.
 */
export function firstFrame(port: number, bytes: readonly Buffer[], tlsOptions: tls.ConnectionOptions | null = null, deadlineMs = 10_000): Promise<Frame> {
  return new Promise((resolve, reject) => {
    const socket = tlsOptions === null ? net.connect({ host: '127.0.0.1', port }) : tls.connect({ host: '127.0.0.1', port, ...tlsOptions });
    const reader = new FrameReader({ frameBytesMax: 1 << 20 });
    let done = false;
    const finish = (frame: Frame | null, why: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (frame === null) reject(new Error(why));
      else resolve(frame);
    };
    const timer = setTimeout(() => finish(null, 'no frame before the deadline'), deadlineMs);
    socket.once(tlsOptions === null ? 'connect' : 'secureConnect', () => {
      for (const b of bytes) socket.write(b);
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        const frame = reader.push(chunk)[0];
        if (frame !== undefined) finish({ ...frame, payload: Buffer.from(frame.payload) }, '');
      } catch (e) {
        finish(null, String(e));
      }
    });
    socket.on('error', (e) => finish(null, e.message));
    socket.on('close', () => finish(null, 'closed before a whole frame arrived'));
  });
}
