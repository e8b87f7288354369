// A minimal client of the client protocol for tests, written from the documented layout
// (reference/client-protocol.md), independently of the member's own writer: requests are built
// frame by frame here; answers are read back with the member's frame reader (their layout is
// checked byte by byte in tests/unit/client-codec.test.ts).
import net from 'node:net';
import { ClientFrameReader, FLAG_BEGIN_STRUCT, FLAG_END_STRUCT, FLAG_FINAL, FLAG_NULL, FLAG_UNFRAGMENTED, type ClientMessage } from '../../src/client/frames.js';

export interface WireFrame {
  flags: number;
  content: Buffer;
}

export function wireFrame(content: Buffer | string, flags = 0): WireFrame {
  return { flags, content: typeof content === 'string' ? Buffer.from(content, 'utf8') : content };
}

export function encodeFrames(frames: WireFrame[]): Buffer {
  const parts: Buffer[] = [];
  frames.forEach((f, i) => {
    const header = Buffer.alloc(6);
    header.writeInt32LE(6 + f.content.length, 0);
    header.writeUInt16LE(f.flags | (i === frames.length - 1 ? FLAG_FINAL : 0), 4);
    parts.push(header, f.content);
  });
  return Buffer.concat(parts);
}

export function requestInitial(type: number, correlationId: bigint, partitionId: number, fixed: Buffer = Buffer.alloc(0)): WireFrame {
  const content = Buffer.alloc(16 + fixed.length);
  content.writeInt32LE(type, 0);
  content.writeBigInt64LE(correlationId, 4);
  content.writeInt32LE(partitionId, 12);
  fixed.copy(content, 16);
  return { flags: FLAG_UNFRAGMENTED, content };
}

export function uuidBytes(text: string | null): Buffer {
  const b = Buffer.alloc(17);
  if (text === null) {
    b[0] = 1;
    return b;
  }
  const hex = text.replace(/-/g, '');
  b.writeBigInt64LE(BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`)), 1);
  b.writeBigInt64LE(BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`)), 9);
  return b;
}

/** The UUID at `at` of a fixed-field buffer, as text (null when its null flag is set). */
export function uuidAt(b: Buffer, at: number): string | null {
  if (b[at] !== 0) return null;
  const hex = BigInt.asUintN(64, b.readBigInt64LE(at + 1)).toString(16).padStart(16, '0') + BigInt.asUintN(64, b.readBigInt64LE(at + 9)).toString(16).padStart(16, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const CLIENT_UUID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

/** Client.authentication as the Node client lays it out (no credentials unless given). */
export function authRequest(clusterName: string, options: { correlationId?: bigint; username?: string; password?: string; extra?: WireFrame[]; extraFixed?: Buffer } = {}): Buffer {
  const fixed = Buffer.concat([uuidBytes(CLIENT_UUID), Buffer.from([1]), options.extraFixed ?? Buffer.alloc(0)]);
  const nullable = (v: string | undefined): WireFrame => (v === undefined ? wireFrame(Buffer.alloc(0), FLAG_NULL) : wireFrame(v));
  return encodeFrames([
    requestInitial(0x000100, options.correlationId ?? 7n, -1, fixed),
    wireFrame(clusterName),
    nullable(options.username),
    nullable(options.password),
    wireFrame('NJS'),
    wireFrame('5.7.0'),
    wireFrame('hz.client_0'),
    wireFrame(Buffer.alloc(0), FLAG_BEGIN_STRUCT),
    wireFrame('label-a'),
    wireFrame('label-é'),
    wireFrame(Buffer.alloc(0), FLAG_END_STRUCT),
    ...(options.extra ?? []),
  ]);
}

/** A request with no parameters (ping, add cluster view listener, an unknown type). */
export function bareRequest(type: number, correlationId: bigint): Buffer {
  return encodeFrames([requestInitial(type, correlationId, -1)]);
}

/** The frames of an encoded message. */
export function splitFrames(bytes: Buffer): WireFrame[] {
  const out: WireFrame[] = [];
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readInt32LE(at);
    out.push({ flags: bytes.readUInt16LE(at + 4), content: bytes.subarray(at + 6, at + length) });
    at += length;
  }
  return out;
}

/** A raw client connection: sends bytes, collects the member's messages, notes when it closes. */
export class RawClient {
  readonly messages: ClientMessage[] = [];
  closed = false;
  private readonly reader = new ClientFrameReader({ frameBytesMax: 64 * 1024 * 1024, preamble: false, initialFrameBytesMin: 13 });
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.append(chunk);
      for (let m = this.reader.next(); m !== null; m = this.reader.next()) this.messages.push(m);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, host, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Waits until `f` holds (or the deadline passes: throws naming `what`). */
  async until(what: string, deadlineMs: number, f: () => boolean): Promise<void> {
    const end = Date.now() + deadlineMs;
    while (!f()) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what} (${this.messages.length} messages, closed ${this.closed})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next message of this type with this correlation id (waits for it). */
  async answer(type: number, correlationId: bigint, deadlineMs = 5000): Promise<ClientMessage> {
    let found: ClientMessage | undefined;
    await this.until(`message 0x${type.toString(16)} for call ${correlationId}`, deadlineMs, () => {
      found = this.messages.find((m) => m.frames[0]!.content.readInt32LE(0) === type && m.frames[0]!.content.readBigInt64LE(4) === correlationId);
      return found !== undefined || this.closed;
    });
    if (found === undefined) throw new Error(`the connection closed before message 0x${type.toString(16)} for call ${correlationId}`);
    return found;
  }

  close(): void {
    this.socket.destroy();
  }
}
