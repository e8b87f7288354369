// The command line of grid-admin: global options (anywhere on the line), one command, then that
// command's arguments and switches. `--name value` and `--name=value` are both accepted; `--` ends
// the options. Decisions: an option given twice is a usage error (a script with a stale flag should
// fail, not guess); a command's switches must follow the command's name; values are checked here
// (address, timeout, TLS flags that need --https) before anything is read or sent. No I/O: files
// named by options are read by the entry point.
import { suggest } from '../config/did-you-mean.js';
import { COMMANDS, findCommand, type CommandSpec } from './commands.js';
import { UsageError } from './outcome.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 5701;
export const DEFAULT_TIMEOUT_SECONDS = 30;
/** A day: a longer wait is a typo, not an intent. */
export const TIMEOUT_SECONDS_MAX = 86_400;

interface OptionSpec {
  readonly name: string;
  /** Placeholder of the value in help, or null for a switch. */
  readonly value: string | null;
  readonly help: string;
}

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'address', value: 'HOST:PORT', help: `Member to call. Default ${DEFAULT_HOST}:${DEFAULT_PORT}; a HOST alone means port ${DEFAULT_PORT}; IPv6 as [::1]:5701.` },
  { name: 'cluster-name', value: 'NAME', help: 'Cluster name, the credential when security is off. Default $GRID_ADMIN_CLUSTER_NAME, else dev.' },
  { name: 'user', value: 'NAME', help: 'User of the member\'s realm, when security is on. Default $GRID_ADMIN_USER.' },
  { name: 'password', value: 'PASSWORD', help: 'Password of --user (visible to other local users in the process list: prefer --password-file or $GRID_ADMIN_PASSWORD).' },
  { name: 'password-file', value: 'FILE', help: 'Read the password from the first line of FILE.' },
  { name: 'https', value: null, help: 'Speak HTTPS (the member\'s port has <ssl enabled="true">).' },
  { name: 'ca', value: 'FILE', help: 'PEM certificate(s) of the authority that signed the member\'s certificate (default: the system\'s authorities).' },
  { name: 'cert', value: 'FILE', help: 'PEM client certificate, for a member with client-auth (needs --key).' },
  { name: 'key', value: 'FILE', help: 'PEM private key of --cert.' },
  { name: 'insecure', value: null, help: 'DANGEROUS: do not verify the member\'s certificate. Anyone on the path can then read the credentials. Testing only.' },
  { name: 'timeout', value: 'SECONDS', help: `Give up after SECONDS without a complete answer (exit 3). Default ${DEFAULT_TIMEOUT_SECONDS}.` },
  { name: 'json', value: null, help: 'Print the member\'s JSON answer (or a JSON object describing the error) instead of text.' },
  { name: 'help', value: null, help: 'Print help (after a command: that command\'s help) and exit 0.' },
];

export interface Address {
  readonly host: string;
  readonly port: number;
  /** As written in messages: `host:port`, `[v6]:port`. */
  readonly display: string;
}

export interface GlobalOptions {
  readonly address: Address;
  readonly clusterName: string | null;
  readonly user: string | null;
  readonly password: string | null;
  readonly passwordFile: string | null;
  readonly https: boolean;
  readonly ca: string | null;
  readonly cert: string | null;
  readonly key: string | null;
  readonly insecure: boolean;
  readonly timeoutMs: number;
  readonly json: boolean;
}

export type Parsed =
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'run'; readonly command: CommandSpec; readonly positionals: readonly string[]; readonly switches: ReadonlySet<string>; readonly options: GlobalOptions };

/** Parses `host:port`, `[v6]:port` or a bare host. Throws UsageError. */
export function parseAddress(text: string): Address {
  const bad = (why: string, hint: string | null = null): UsageError => new UsageError(`--address '${text}': ${why}`, hint);
  let host: string;
  let portText: string | null;
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(.*))?$/.exec(text);
  if (v6 !== null) {
    host = v6[1] as string;
    portText = v6[2] ?? null;
  } else {
    const colons = text.split(':').length - 1;
    if (colons > 1) throw bad('an IPv6 address needs brackets', `--address [${text}]:${DEFAULT_PORT}`);
    const [h, p] = text.split(':');
    host = h as string;
    portText = p ?? null;
  }
  if (host === '' || !/^[A-Za-z0-9._:-]+$/.test(host)) throw bad('expected HOST:PORT');
  let port = DEFAULT_PORT;
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw bad('the port must be a number from 1 to 65535');
    port = Number(portText);
  }
  const display = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port, display };
}

export function parseTimeout(text: string): number {
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0 || Number(text) > TIMEOUT_SECONDS_MAX) {
    throw new UsageError(`--timeout '${text}': expected a number of seconds above 0 and at most ${TIMEOUT_SECONDS_MAX}`);
  }
  return Math.round(Number(text) * 1000);
}

function unknownOption(token: string, command: CommandSpec | null): UsageError {
  const name = token.replace(/^-+/, '').split('=')[0] as string;
  const own = command?.switches.map((s) => s.name) ?? [];
  const others = COMMANDS.flatMap((c) => c.switches.map((s) => s.name));
  const close = suggest(name, [...GLOBAL_OPTIONS.map((o) => o.name), ...own]);
  if (close !== null) return new UsageError(`unknown option '${token}'`, `did you mean '--${close}'?`);
  if (others.includes(name)) {
    const owners = COMMANDS.filter((c) => c.switches.some((s) => s.name === name)).map((c) => c.name);
    return new UsageError(`option '--${name}' belongs to the command ${owners.join(', ')}${command === null ? '' : `, not to ${command.name}`}`, `grid-admin ${owners[0]} --${name}`);
  }
  return new UsageError(`unknown option '${token}'`);
}

function unknownCommand(name: string): UsageError {
  const close = suggest(name, [...COMMANDS.map((c) => c.name), 'help']);
  return new UsageError(`unknown command '${name}'`, close === null ? `commands: ${COMMANDS.map((c) => c.name).join(', ')}` : `did you mean '${close}'?`);
}

/** Parses argv (without node and the script). Throws UsageError; help is a result, not an error. */
export function parseArgs(argv: readonly string[]): Parsed {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const switches = new Set<string>();
  const positionals: string[] = [];
  let command: CommandSpec | null = null;
  // `help` as the first word: `grid-admin help [COMMAND]`.
  let helpWord = false;
  let wantsHelp = false;
  let optionsEnded = false;

  const takePositional = (token: string): void => {
    if (command === null) {
      if (token === 'help' && !helpWord) {
        helpWord = true;
        return;
      }
      const found = findCommand(token);
      if (found === undefined) throw unknownCommand(token);
      command = found;
      return;
    }
    if (helpWord) throw new UsageError(`unexpected argument '${token}' after 'help ${(command as CommandSpec).name}'`);
    positionals.push(token);
  };

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (optionsEnded || !token.startsWith('-') || token === '-') {
      takePositional(token);
      continue;
    }
    if (token === '--') {
      optionsEnded = true;
      continue;
    }
    if (token === '-h') {
      wantsHelp = true;
      continue;
    }
    if (!token.startsWith('--')) throw unknownOption(token, command);
    const eq = token.indexOf('=');
    const name = token.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? null : token.slice(eq + 1);
    const global = GLOBAL_OPTIONS.find((o) => o.name === name);
    const own = (command as CommandSpec | null)?.switches.find((s) => s.name === name);
    if (global === undefined && own === undefined) throw unknownOption(token, command);
    if (global?.name === 'help') {
      wantsHelp = true;
      continue;
    }
    if (global !== undefined && global.value !== null) {
      let value = inline;
      if (value === null) {
        const next = argv[i + 1];
        if (next === undefined) throw new UsageError(`--${name} needs a value (${global.value})`);
        value = next;
        i++;
      }
      if (values.has(name)) throw new UsageError(`--${name} is given twice`);
      values.set(name, value);
      continue;
    }
    if (inline !== null) throw new UsageError(`--${name} takes no value`);
    const set = global !== undefined ? flags : switches;
    if (set.has(name)) throw new UsageError(`--${name} is given twice`);
    set.add(name);
  }

  if (helpWord || wantsHelp) {
    const target = command as CommandSpec | null;
    return { kind: 'help', text: target === null ? generalHelp() : commandHelp(target) };
  }
  if (command === null) throw new UsageError('no command given', `commands: ${COMMANDS.map((c) => c.name).join(', ')}`);
  const cmd: CommandSpec = command;
  if (positionals.length < cmd.positionalsMin) throw new UsageError(`${cmd.name} needs ${cmd.synopsis}`, `grid-admin ${cmd.name} --help`);
  if (positionals.length > cmd.positionalsMax) {
    throw new UsageError(
      cmd.positionalsMax === 0 ? `${cmd.name} takes no argument (got '${positionals[0]}')` : `${cmd.name} takes at most ${cmd.positionalsMax} argument${cmd.positionalsMax === 1 ? '' : 's'}`,
      `usage: grid-admin ${cmd.name}${cmd.synopsis === '' ? '' : ' ' + cmd.synopsis}`,
    );
  }
  return { kind: 'run', command: cmd, positionals, switches, options: globalOptions(values, flags) };
}

function globalOptions(values: ReadonlyMap<string, string>, flags: ReadonlySet<string>): GlobalOptions {
  const https = flags.has('https');
  for (const name of ['ca', 'cert', 'key']) {
    if (values.has(name) && !https) throw new UsageError(`--${name} is for HTTPS`, `add --https`);
  }
  if (flags.has('insecure') && !https) throw new UsageError('--insecure is for HTTPS', 'add --https');
  if (values.has('cert') !== values.has('key')) throw new UsageError('--cert and --key go together (a client certificate and its private key)');
  if (values.has('user') && values.has('cluster-name')) {
    throw new UsageError('--user and --cluster-name exclude each other', 'security off: --cluster-name NAME; security on: --user NAME with --password-file FILE');
  }
  if (values.has('password') && values.has('password-file')) throw new UsageError('--password and --password-file exclude each other');
  for (const name of ['cluster-name', 'user']) {
    if (values.get(name) === '') throw new UsageError(`--${name} must not be empty`);
  }
  return {
    address: parseAddress(values.get('address') ?? `${DEFAULT_HOST}:${DEFAULT_PORT}`),
    clusterName: values.get('cluster-name') ?? null,
    user: values.get('user') ?? null,
    password: values.get('password') ?? null,
    passwordFile: values.get('password-file') ?? null,
    https,
    ca: values.get('ca') ?? null,
    cert: values.get('cert') ?? null,
    key: values.get('key') ?? null,
    insecure: flags.has('insecure'),
    timeoutMs: parseTimeout(values.get('timeout') ?? String(DEFAULT_TIMEOUT_SECONDS)),
    json: flags.has('json'),
  };
}

/** Whether argv asks for --json, for reporting a usage error found before parsing completed. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

function optionLines(options: readonly { name: string; value?: string | null; help: string }[]): string[] {
  const heads = options.map((o) => `  --${o.name}${o.value === undefined || o.value === null ? '' : ' ' + o.value}`);
  const width = Math.max(...heads.map((h) => h.length)) + 2;
  return options.map((o, i) => `${(heads[i] as string).padEnd(width)}${o.help}`);
}

export const EXIT_STATUS_HELP = [
  'Exit status:',
  '  0  the member did what was asked',
  '  1  the member refused (HTTP 4xx/5xx or {"status":"fail"}; its message on stderr), or answered something unreadable',
  '  2  usage error (nothing was sent)',
  '  3  no answer: connection refused, unknown host, TLS failure, timeout',
  '  4  internal error of grid-admin (a bug)',
];

export function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    'Usage: grid-admin [OPTIONS] COMMAND [ARGS]',
    '',
    'Administers a Grid cluster through the REST API of one member (docs/operations.md, "Admin CLI").',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${'help'.padEnd(width)}Print this help, or 'help COMMAND' a command's help.`,
    '',
    'Options (anywhere on the line):',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Credentials: security off, the cluster name (--cluster-name, $GRID_ADMIN_CLUSTER_NAME, default dev); security on,',
    'a realm user and password (--user or $GRID_ADMIN_USER; --password, --password-file or $GRID_ADMIN_PASSWORD).',
    '',
    ...EXIT_STATUS_HELP,
    '',
  ].join('\n');
}

export function commandHelp(c: CommandSpec): string {
  return [
    `Usage: grid-admin [OPTIONS] ${c.name}${c.synopsis === '' ? '' : ' ' + c.synopsis}`,
    '',
    c.summary,
    '',
    ...wrap(c.details, 100),
    ...(c.switches.length === 0 ? [] : ['', 'Switches:', ...optionLines(c.switches)]),
    '',
    "Options: see 'grid-admin --help' (--address, credentials, --https, --timeout, --json).",
    '',
    ...EXIT_STATUS_HELP,
    '',
  ].join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/)) {
    if (current !== '' && current.length + 1 + word.length > width) {
      out.push(current);
      current = word;
    } else current = current === '' ? word : `${current} ${word}`;
  }
  if (current !== '') out.push(current);
  return out;
}
