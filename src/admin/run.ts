// One run of grid-admin, from argv and environment to an Outcome, with its I/O passed in (reading
// the files options name, one HTTP exchange), so that every path through it, usage errors
// included, can be checked without a member. Order: parse the line (usage errors, help) → read
// --password-file, --ca, --cert, --key (unreadable: usage error, exit 2) → credentials → the
// command's call → one exchange → interpret the answer or the failure.
import { parseArgs, wantsJson, type GlobalOptions } from './args.js';
import { interpretAnswer, interpretFailure, type CallContext } from './answer.js';
import { EXIT_OK, line, UsageError, usageOutcome, type Outcome } from './outcome.js';
import { buildRequest, describeCredentials, resolveCredentials, type AdminEnv } from './request.js';
import type { ExchangeFn, Target, TlsOptions } from './transport.js';

export interface AdminIo {
  /** Reads a whole file; throws (with a message naming the problem) when it cannot. */
  readonly readFile: (path: string) => Buffer;
  readonly exchange: ExchangeFn;
}

/** The warning printed on every run with --insecure. */
export const INSECURE_WARNING =
  "grid-admin: WARNING: --insecure: the member's certificate is NOT verified; anyone on the path can impersonate the member and read the credentials\n";

function readOptionFile(io: AdminIo, option: string, file: string): Buffer {
  try {
    return io.readFile(file);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(`cannot read ${option} '${file}': ${err.code ?? err.message}`);
  }
}

function tlsOptions(options: GlobalOptions, io: AdminIo): TlsOptions | null {
  if (!options.https) return null;
  return {
    ca: options.ca === null ? null : readOptionFile(io, '--ca', options.ca),
    cert: options.cert === null ? null : readOptionFile(io, '--cert', options.cert),
    key: options.key === null ? null : readOptionFile(io, '--key', options.key),
    verify: !options.insecure,
  };
}

export async function runAdmin(argv: readonly string[], env: AdminEnv, io: AdminIo): Promise<Outcome> {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) return usageOutcome(e, wantsJson(argv));
    throw e;
  }
  if (parsed.kind === 'help') return { exitCode: EXIT_OK, stdout: line(parsed.text), stderr: '' };
  const { command, options } = parsed;
  let call;
  let credentials;
  let target: Target;
  try {
    call = command.plan({ positionals: parsed.positionals, switches: parsed.switches });
    const passwordFile = options.passwordFile === null ? null : readOptionFile(io, '--password-file', options.passwordFile).toString('utf8');
    credentials = resolveCredentials(options, env, passwordFile);
    target = { host: options.address.host, port: options.address.port, tls: tlsOptions(options, io), timeoutMs: options.timeoutMs };
  } catch (e) {
    if (e instanceof UsageError) return usageOutcome(e, options.json, `grid-admin ${command.name} --help`);
    throw e;
  }
  const ctx: CallContext = {
    command: command.name,
    target: options.address.display,
    https: options.https,
    json: options.json,
    credentials: describeCredentials(credentials),
  };
  const result = await io.exchange(target, buildRequest(call, credentials));
  const outcome = result.ok ? interpretAnswer(call, result.answer, ctx) : interpretFailure(result.failure, ctx);
  return options.insecure ? { ...outcome, stderr: INSECURE_WARNING + outcome.stderr } : outcome;
}
