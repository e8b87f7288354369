// Reading plain TCP connections into one buffer shared by all of them (issue #14).
//
// By default node:net reads every chunk into memory of its own: per read a 64 KiB allocation, shrunk
// to what arrived, wrapped in a new ArrayBuffer that the garbage collector frees later, then pushed
// through the socket's Readable stream to a 'data' listener. For small requests that is a large part
// of the member's cost per request. Node offers the alternative as the `onread` option of
// `new net.Socket()`: the kernel's bytes land in a buffer the caller supplies and a callback gets
// their count, with no allocation and no stream in between. net.Server gives no way to pass that
// option to the sockets it accepts, so this module sets on an accepted socket the two fields its
// constructor sets for `onread` (found by their symbols' descriptions) and points the socket's
// handle at the buffer. Node's own pause() and resume() honour that mode (they stop and start the
// handle's reading), and the end of the stream, errors and close work as before.
//
// These are Node internals. Every one is checked before use, and when anything is not as expected
// (another Node, a TLS socket, a socket already reading into a buffer of its own) nothing is changed
// and the caller reads through 'data' events as before: slower, never wrong. A test asserts that
// the Node this project supports takes the fast path, so a change there is noticed.
//
// The caller owns the rule that makes sharing safe: the bytes given to `onRead` are valid only
// until it returns (the next read of any connection overwrites them). The HTTP parser copies out
// what it keeps (src/http/parser.ts, "borrowed input").
import type { Socket } from 'node:net';

/** Bytes one read may bring; libuv suggests this size for TCP reads. */
export const SHARED_READ_BYTES = 64 * 1024;

interface HandleWithUserBuffer {
  useUserBuffer(buffer: Uint8Array): void;
}

/**
 * Makes `socket` read into `buffer` and call `onRead` with the bytes of each read (a view of
 * `buffer`, valid until onRead returns). Returns false, changing nothing, when this Node or this
 * socket does not allow it; the caller then listens to 'data' as usual. Bytes the socket had
 * already buffered are not touched: read them (socket.read()) before calling this.
 */
export function readIntoSharedBuffer(socket: Socket, buffer: Buffer, onRead: (chunk: Buffer) => void): boolean {
  if ((socket as { encrypted?: boolean }).encrypted === true) return false;
  const handle = (socket as unknown as { _handle?: Partial<HandleWithUserBuffer> | null })._handle;
  if (handle === null || handle === undefined || typeof handle.useUserBuffer !== 'function') return false;
  let bufferField: symbol | undefined;
  let callbackField: symbol | undefined;
  for (const s of Object.getOwnPropertySymbols(socket)) {
    if (s.description === 'kBuffer') bufferField = s;
    else if (s.description === 'kBufferCb') callbackField = s;
  }
  if (bufferField === undefined || callbackField === undefined) return false;
  const fields = socket as unknown as Record<symbol, unknown>;
  // Both unset (null) on a socket accepted by net.Server; anything else is not the shape we know.
  if (fields[bufferField] !== null || fields[callbackField] !== null) return false;
  fields[bufferField] = buffer;
  fields[callbackField] = (bytes: number): void => {
    onRead(buffer.subarray(0, bytes));
  };
  handle.useUserBuffer(buffer);
  return true;
}
