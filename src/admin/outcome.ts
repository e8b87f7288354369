// What one run of grid-admin ends with: an exit status, text for stdout and text for stderr. The
// statuses are a contract with scripts (docs/operations.md, "Admin CLI"), so they are named here
// once and never reused for something else:
//   0  the member answered and did what was asked
//   1  the member answered and refused (4xx/5xx, or a `{"status":"fail"}` body), or its answer
//      could not be understood
//   2  usage error: the command line (or a file it names) is wrong; nothing was sent
//   3  no answer: the member could not be reached (refused connection, unknown host, TLS failure,
//      timeout, connection closed before an answer)
//   4  internal error of grid-admin itself (a bug: please report it with the stack it prints)

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;
export const EXIT_UNREACHABLE = 3;
export const EXIT_INTERNAL = 4;

export interface Outcome {
  readonly exitCode: number;
  /** Printed to stdout as is (the caller adds nothing); empty for none. */
  readonly stdout: string;
  readonly stderr: string;
}

/** A wrong command line. `hint` is a second line (a did-you-mean, or where to look). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint: string | null = null,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Ends a line with `\n` unless it is empty or already does. */
export function line(text: string): string {
  return text === '' || text.endsWith('\n') ? text : text + '\n';
}

/** The outcome of a usage error: stderr names the problem, the hint and where help is; --json also gets an object on stdout. */
export function usageOutcome(error: UsageError, json: boolean, helpCommand = 'grid-admin --help'): Outcome {
  const stderr = `grid-admin: ${error.message}\n${error.hint === null ? '' : line(`hint: ${error.hint}`)}run '${helpCommand}' for usage\n`;
  const stdout = json ? line(JSON.stringify({ status: 'fail', exitCode: EXIT_USAGE, error: 'usage', message: error.message })) : '';
  return { exitCode: EXIT_USAGE, stdout, stderr };
}
