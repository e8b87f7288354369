// The request a handler sees: decoded path parts, headers, the whole body (already bounded by the
// body limit), and a way to learn that the client went away (for waiting polls).
import type { ClientLiveness } from '../member/member-api.js';

export interface HttpRequest {
  readonly method: string;
  /** Decoded path segments after the leading `/`. */
  readonly segments: readonly string[];
  readonly params: Readonly<Record<string, string>>;
  /** Decoded segments matched by a tail parameter. */
  readonly tail: readonly string[];
  /** A header field's value by its lower-case name (RequestHead.header); undefined when absent. */
  header(lowerName: string): string | undefined;
  /** null when the request had no body at all (no Content-Length, not chunked). */
  readonly body: Buffer | null;
  readonly remoteAddress: string;
  readonly client: ClientLiveness;
  /**
   * The console session this request rides (set by the dispatcher once the session, its header,
   * Host and Origin and its role were checked): it stands in for credentials.
   */
  readonly console?: { readonly username: string; readonly role: string; readonly token: string };
  /** The raw query after `?` (not decoded), or null when the target has none. */
  queryString?(): string | null;
}
