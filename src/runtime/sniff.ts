// Telling protocols apart by the first bytes of a connection (rest.md §1): an HTTP request starts
// with an upper-case method token and a space; the member protocol with the preamble `GRD`; the
// reference's client protocol with `CP2` (spec/client.md); a TLS ClientHello with a handshake record
// (0x16 0x03). Anything else is refused. Pure: tested directly.

export type SniffResult = 'http' | 'member' | 'client' | 'tls' | 'unknown' | 'need-more';

/** The longest method token we accept before the space (e.g. "CONNECT" is 7). */
const METHOD_CHARS_MAX = 16;

export function sniff(head: Uint8Array): SniffResult {
  if (head.length === 0) return 'need-more';
  const b0 = head[0] as number;
  if (b0 === 0x16) {
    if (head.length < 2) return 'need-more';
    return head[1] === 0x03 ? 'tls' : 'unknown';
  }
  if (b0 === 0x47 /* G */ && isPrefixOf(head, MEMBER_PREFIX)) {
    if (head.length < MEMBER_PREFIX.length) return 'need-more';
    return 'member';
  }
  // `C` `P` may also begin a method token (none is known, but the grammar allows one): only `CP2`
  // is the client protocol, since a token holds no digit.
  if (b0 === 0x43 /* C */ && isPrefixOf(head, CLIENT_PREFIX)) {
    if (head.length < CLIENT_PREFIX.length) return 'need-more';
    return 'client';
  }
  for (let i = 0; i < head.length; i++) {
    const c = head[i] as number;
    if (c === 0x20) return i > 0 ? 'http' : 'unknown';
    if (c < 0x41 || c > 0x5a || i >= METHOD_CHARS_MAX) return 'unknown';
  }
  return 'need-more';
}

const MEMBER_PREFIX = [0x47, 0x52, 0x44]; // "GRD"
const CLIENT_PREFIX = [0x43, 0x50, 0x32]; // "CP2"

function isPrefixOf(head: Uint8Array, prefix: readonly number[]): boolean {
  const n = Math.min(head.length, prefix.length);
  for (let i = 0; i < n; i++) if (head[i] !== prefix[i]) return false;
  return true;
}
