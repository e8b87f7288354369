// The bytes of a response head (status line, fields, empty line), built as one latin1 string: the
// connection shell writes it and the body with one write per batch. Pure: tested directly.
//
// - Reasons are the standard ones (rest.md §3.5), the same words node:http uses.
// - Every response carries Content-Length (rest.md §3.4), 204 and HEAD answers included: the length
//   of the body a GET would carry (always 0 for this member's HEAD and 204 answers).
// - A field value with CR, LF or NUL would split the response (a header injection); such a value
//   is never written: it becomes `?` characters, as `headerSafe` does for messages.
import type { HttpReply } from './reply.js';

const REASONS: Readonly<Record<number, string>> = {
  100: 'Continue',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  206: 'Partial Content',
  301: 'Moved Permanently',
  302: 'Found',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  422: 'Unprocessable Entity',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  507: 'Insufficient Storage',
};

/** `HTTP/1.1 <status> <reason>\r\n` for every status 100-599 (reason empty when not standard). */
const STATUS_LINES: readonly string[] = (() => {
  const lines: string[] = [];
  for (let s = 0; s < 600; s++) lines.push(`HTTP/1.1 ${s} ${REASONS[s] ?? ''}\r\n`);
  return lines;
})();

export const CONTINUE_HEAD = 'HTTP/1.1 100 Continue\r\n\r\n';

function statusLine(status: number): string {
  return STATUS_LINES[status] ?? `HTTP/1.1 ${status} \r\n`;
}

const UNSAFE = /[\r\n\0]/;

function safe(value: string): string {
  return UNSAFE.test(value) ? value.replace(/[\r\n\0]/g, '?') : value;
}

/**
 * The head of `reply` with a body of `bodyBytes` bytes. `tail` ends it: the connection fields and the
 * empty line (`Connection: close\r\n\r\n`, or keep-alive with its timeout).
 */
export function responseHead(reply: HttpReply, bodyBytes: number, tail: string): string {
  let head = statusLine(reply.status);
  if (reply.contentType !== undefined) head += `content-type: ${safe(reply.contentType)}\r\n`;
  const extra = reply.headers;
  if (extra !== undefined) for (const name in extra) head += `${name}: ${safe(extra[name] as string)}\r\n`;
  return `${head}content-length: ${bodyBytes}\r\n${tail}`;
}

export function keepAliveTail(idleTimeoutSeconds: number): string {
  return `Connection: keep-alive\r\nKeep-Alive: timeout=${idleTimeoutSeconds}\r\n\r\n`;
}

export const CLOSE_TAIL = 'Connection: close\r\n\r\n';
