// Request framing by Transfer-Encoding (RFC 9112 §6), decided before anything else about a request:
// the answer to a request whose body cannot be delimited must not depend on its path, its group or
// whether REST is on, and the connection must close after it (the bytes that follow cannot be told
// apart from the body). Pure: the runtime passes the header value in and writes the answer out.
//
// - `chunked` last, nothing before it: the only framing this member reads.
// - Anything else last (`gzip`, `identity`, `xchunked`, `gzip, identity`): the body length cannot be
//   determined; RFC 9112 §6.3 rule 4 says 400 and close.
// - `chunked` last with other codings before it (`gzip, chunked`): the framing is valid but the
//   member decodes no transfer coding but chunked; RFC 9112 §6.1 says 501 (Not Implemented).
//   The connection closes too, since the body is not read.
// - `chunked` more than once (`chunked, chunked`): RFC 9112 §6.1 forbids it; 400.
// A header repeated on several lines reaches us joined with ", ", so the same rules apply.
import { GridError } from '../util/errors.js';

/** Null when `value` (the Transfer-Encoding header) frames the body as chunked alone; else the error to answer. */
export function transferCodingError(value: string): GridError | null {
  // The common case, without splitting: exactly `chunked` (any case, as the token is case-insensitive).
  if (value.length === 7 && value.toLowerCase() === 'chunked') return null;
  const codings = value.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '');
  const last = codings[codings.length - 1];
  if (last !== 'chunked') {
    return new GridError('ERR_HTTP_BAD_REQUEST', `Transfer-Encoding '${clip(value)}' does not end with chunked: the body length cannot be determined`);
  }
  const before = codings.slice(0, -1);
  if (before.length === 0) return null;
  if (before.includes('chunked')) {
    return new GridError('ERR_HTTP_BAD_REQUEST', `Transfer-Encoding '${clip(value)}' applies chunked more than once`);
  }
  return new GridError('ERR_HTTP_TRANSFER_CODING', `transfer coding '${clip(before.join(', '))}' is not supported (only chunked)`);
}

/** Header values are echoed in messages; keep them short. */
function clip(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 60)}…`;
}
