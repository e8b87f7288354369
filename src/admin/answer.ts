// Turns what happened to one call into an Outcome (exit status, stdout, stderr), without I/O.
// Success is a 2xx answer whose body is not `{"status":"fail",...}`: the command renders it as text,
// or --json prints the member's body as it came (an object {"status":"success","httpStatus":N}
// for an empty body). A refusal is any other answer: exit 1, the member's message on stderr with a
// hint where one helps; --json prints the member's JSON body, or an object describing the refusal
// when the body is not JSON. No answer at all (connection, TLS, timeout) is exit 3. The reference's
// admin script exits 0 whatever happens; this one does not.
import { AnswerShapeError, type AdminCall, type AnswerView } from './commands.js';
import { EXIT_OK, EXIT_REFUSED, EXIT_UNREACHABLE, line, type Outcome } from './outcome.js';

/** An HTTP answer as received. */
export interface HttpAnswer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** No answer: `code` is Node's error code when there is one (ECONNREFUSED, CERT_HAS_EXPIRED, ...). */
export interface TransportFailure {
  readonly code: string | null;
  readonly message: string;
  readonly timedOut: boolean;
}

export interface CallContext {
  readonly command: string;
  /** `host:port` of the member called. */
  readonly target: string;
  readonly https: boolean;
  readonly json: boolean;
  /** Credentials as described for messages, e.g. "cluster name 'dev'". */
  readonly credentials: string;
}

function parseJson(answer: HttpAnswer): unknown {
  if (answer.body.trim() === '') return undefined;
  try {
    return JSON.parse(answer.body) as unknown;
  } catch {
    return undefined;
  }
}

function failBody(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  return o.status === 'fail' ? o : null;
}

const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

function statusText(status: number): string {
  const reason = REASONS[status];
  return reason === undefined ? `HTTP ${status}` : `HTTP ${status} ${reason}`;
}

/** What the refusal says, in the member's words when it gave any. */
function refusalMessage(call: AdminCall, answer: HttpAnswer, fail: Record<string, unknown> | null): string {
  if (fail !== null && typeof fail.message === 'string') return fail.message;
  if (fail !== null && typeof fail.state === 'string') return `the cluster is already ${fail.state}`;
  const known = call.statusMessages?.[answer.status];
  if (known !== undefined) return known;
  const header = answer.headers['grid-error'];
  if (header !== undefined && header !== '') return header;
  if (answer.status === 404) return 'no such endpoint on this member';
  return statusText(answer.status);
}

function refusalHint(answer: HttpAnswer, message: string, ctx: CallContext): string | null {
  if (message === 'unauthenticated') {
    return `the member refused ${ctx.credentials}: security off needs --cluster-name (default dev); security on needs --user with its password`;
  }
  const group = /REST endpoint group (\w+) is not enabled/.exec(message);
  if (group !== null) return `enable the group on the member: <endpoint-group name="${group[1]}" enabled="true"/> in network > rest-api, or --rest-groups ${group[1]}`;
  if (/REST API is not enabled/.test(message)) return 'enable REST on the member: <rest-api enabled="true"> or the --rest flag';
  if (answer.status === 404) return 'is the address that of a Grid member of this version?';
  return null;
}

/** The outcome of a call that got an HTTP answer. */
export function interpretAnswer(call: AdminCall, answer: HttpAnswer, ctx: CallContext): Outcome {
  const value = parseJson(answer);
  const fail = failBody(value);
  const ok = answer.status >= 200 && answer.status < 300 && fail === null;
  if (ok) {
    const view: AnswerView = { status: answer.status, value, body: answer.body };
    let text: string;
    try {
      text = call.render(view);
    } catch (e) {
      if (!(e instanceof AnswerShapeError)) throw e;
      return unreadable(answer, ctx, e.message);
    }
    if (!ctx.json) return { exitCode: EXIT_OK, stdout: line(text), stderr: '' };
    const stdout = value === undefined ? JSON.stringify({ status: 'success', httpStatus: answer.status }) : answer.body.trim();
    return { exitCode: EXIT_OK, stdout: line(stdout), stderr: '' };
  }
  const message = refusalMessage(call, answer, fail);
  const hint = refusalHint(answer, message, ctx);
  const stderr = line(`grid-admin: ${ctx.command} refused by ${ctx.target}: ${message} (${statusText(answer.status)})`) + (hint === null ? '' : line(`hint: ${hint}`));
  let stdout = '';
  if (ctx.json) stdout = line(value === undefined ? JSON.stringify({ status: 'fail', httpStatus: answer.status, message }) : answer.body.trim());
  return { exitCode: EXIT_REFUSED, stdout, stderr };
}

function unreadable(answer: HttpAnswer, ctx: CallContext, why: string): Outcome {
  const snippet = answer.body.length > 200 ? `${answer.body.slice(0, 200)}…` : answer.body;
  const message = `unexpected answer (${why}): ${JSON.stringify(snippet)}`;
  return {
    exitCode: EXIT_REFUSED,
    stdout: ctx.json ? line(JSON.stringify({ status: 'fail', httpStatus: answer.status, message })) : '',
    stderr: line(`grid-admin: ${ctx.command}: ${ctx.target} answered ${statusText(answer.status)} with an ${message}`),
  };
}

function transportHint(f: TransportFailure, ctx: CallContext): string | null {
  if (f.timedOut) return 'the member did not answer in time: is it paused or overloaded? --timeout SECONDS waits longer';
  switch (f.code) {
    case 'ECONNREFUSED':
      return 'nothing listens there: is the member running, and is --address right?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ECONNRESET':
      return ctx.https ? null : 'the connection was closed: if the member speaks TLS, add --https';
    case 'EPROTO':
      return ctx.https ? 'the TLS handshake failed: if the member does not speak TLS, drop --https' : null;
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return "the member's certificate is not signed by a known authority: --ca FILE names the authority that signed it";
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return "the member's certificate does not name this address: call it by a name or address its certificate lists";
    default:
      return null;
  }
}

/** The outcome of a call that got no answer. */
export function interpretFailure(f: TransportFailure, ctx: CallContext): Outcome {
  const what = f.timedOut ? 'no answer' : 'cannot reach the member';
  const message = `${what}: ${f.message}`;
  const hint = transportHint(f, ctx);
  return {
    exitCode: EXIT_UNREACHABLE,
    stdout: ctx.json ? line(JSON.stringify({ status: 'fail', exitCode: EXIT_UNREACHABLE, error: f.timedOut ? 'timeout' : 'connection', code: f.code, message })) : '',
    stderr: line(`grid-admin: ${ctx.command}: ${ctx.target}: ${message}`) + (hint === null ? '' : line(`hint: ${hint}`)),
  };
}
