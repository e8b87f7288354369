// Command-line flags: the highest-precedence source. `--name value` and `--name=value` are both
// accepted. Flags are parsed (and their values checked) before any file is read, so `--help` and
// `--version` work even with a broken configuration, and a typo in a flag is reported first.
// Decisions where the spec is silent: a flag given twice is an error unless it is repeatable
// (`--member`); `--member` replaces the configured member list (it does not add to it);
// `--rest-groups` switches the listed groups on in addition to those already on and implies `--rest`.
import { ConfigError } from './config-error.js';
import { suggest } from './did-you-mean.js';
import { setMemberPort, type Draft } from './draft.js';
import { parseGroupName } from './schema-network.js';
import { LOG_LEVELS, type EndpointGroup, type LogFormat, type LogLevel } from './types.js';
import { expectedGot, parseEnum, parseHost, parseMemberAddress, parseName, parsePort, type Parsed } from './values.js';

interface FlagSpec {
  readonly name: string;
  /** Placeholder for the value in help, or null for a switch. */
  readonly value: string | null;
  readonly repeatable?: boolean;
  readonly help: string;
}

export const FLAG_SPECS: readonly FlagSpec[] = [
  { name: 'config', value: 'FILE', help: 'Read the configuration from FILE. Without it: $GRID_CONFIG, else ./grid.xml if it exists, else built-in defaults.' },
  { name: 'port', value: 'N', help: 'Member port (0..65535; 0 lets the OS choose). Overrides <network><port>; under advanced-network, the port of the member endpoint.' },
  { name: 'cluster-name', value: 'NAME', help: 'Cluster name; members join only a cluster with the same name. Default dev.' },
  { name: 'instance-name', value: 'NAME', help: 'Name of this member. Default: grid- plus random hex, unique per process.' },
  { name: 'member', value: 'HOST[:PORT]', repeatable: true, help: 'A member to join over TCP-IP (host, host:port, host:p1-p2). Repeat for more. Turns tcp-ip join on and replaces the configured member list.' },
  { name: 'rest', value: null, help: 'Enable the REST API (off by default).' },
  { name: 'rest-groups', value: 'G1,G2,...', repeatable: true, help: 'Also enable these REST endpoint groups (CLUSTER_READ, CLUSTER_WRITE, HEALTH_CHECK, PERSISTENCE, WAN, DATA, CP; HOT_RESTART = PERSISTENCE). Groups already on stay on. Implies --rest.' },
  { name: 'public-address', value: 'HOST', help: 'Address other members and clients should use to reach this member.' },
  { name: 'lite', value: null, help: 'Run as a lite member: owns no partitions, serves REST by forwarding.' },
  { name: 'log-level', value: 'LEVEL', help: `Log level: ${LOG_LEVELS.join(', ')}. Default INFO.` },
  { name: 'log-format', value: 'text|json', help: 'Log line format. Default text.' },
  { name: 'print-config', value: null, help: 'Print the effective configuration as XML and exit. Passwords (and properties whose name says password, secret, token or key) print as ****.' },
  { name: 'show-secrets', value: null, help: 'With --print-config: print passwords and secret properties as they are.' },
  { name: 'version', value: null, help: 'Print the version and exit.' },
  { name: 'help', value: null, help: 'Print this help and exit.' },
];

export interface ParsedFlags {
  readonly config: string | null;
  readonly port: number | null;
  readonly clusterName: string | null;
  readonly instanceName: string | null;
  /** Empty when `--member` was not given. */
  readonly members: readonly string[];
  readonly rest: boolean;
  readonly restGroups: readonly EndpointGroup[];
  readonly publicAddress: string | null;
  readonly lite: boolean;
  readonly logLevel: LogLevel | null;
  readonly logFormat: LogFormat | null;
  readonly printConfig: boolean;
  readonly showSecrets: boolean;
  readonly version: boolean;
  readonly help: boolean;
  /** Flag names in the order given, for the start-up log. */
  readonly given: readonly string[];
}

/** Parses argv (without `node` and the script). Throws ConfigError naming the flag. */
export function parseFlags(argv: readonly string[]): ParsedFlags {
  const values = new Map<string, string[]>();
  const given: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h') {
      record(values, given, 'help', '');
      continue;
    }
    if (!arg.startsWith('--') || arg.length === 2) throw new ConfigError(`unexpected argument ${JSON.stringify(arg)} (flags start with --; see --help)`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const spec = FLAG_SPECS.find((f) => f.name === name);
    if (spec === undefined) {
      const hint = suggest(name, FLAG_SPECS.map((f) => f.name));
      throw new ConfigError(`flag --${name} is unknown${hint === null ? '' : ` (did you mean --${hint}?)`}`);
    }
    if (values.has(name) && spec.repeatable !== true) throw new ConfigError(`flag --${name} is given twice`);
    if (spec.value === null) {
      if (eq >= 0) throw new ConfigError(`flag --${name} takes no value`);
      record(values, given, name, '');
      continue;
    }
    let value: string | undefined = eq >= 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (eq < 0) {
      // A following flag is not a value: `--cluster-name --rest` forgot the name.
      if (value === undefined || value.startsWith('--')) throw new ConfigError(`flag --${name} needs a value (${spec.value})`);
      i++;
    }
    value ??= '';
    record(values, given, name, value);
  }
  return interpret(values, given);
}

function record(values: Map<string, string[]>, given: string[], name: string, value: string): void {
  const list = values.get(name);
  if (list === undefined) values.set(name, [value]);
  else list.push(value);
  given.push(name);
}

function interpret(values: Map<string, string[]>, given: string[]): ParsedFlags {
  const one = <T>(name: string, parse: (raw: string) => Parsed<T>): T | null => {
    const raw = values.get(name)?.[0];
    return raw === undefined ? null : check(name, parse, raw);
  };
  const restGroups = (values.get('rest-groups') ?? []).flatMap((list) => {
    const items = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (items.length === 0) throw new ConfigError(`flag --rest-groups`, expectedGot('a comma-separated list of endpoint groups', list));
    return items.map((g) => check('rest-groups', parseGroupName, g));
  });
  return {
    config: one('config', (raw) => (raw.trim() === '' ? { ok: false, expected: 'a file path' } : { ok: true, value: raw })),
    port: one('port', (raw) => parsePort(raw, 0)),
    clusterName: one('cluster-name', parseName),
    instanceName: one('instance-name', parseName),
    members: (values.get('member') ?? []).map((m) => check('member', parseMemberAddress, m)),
    rest: values.has('rest'),
    restGroups,
    publicAddress: one('public-address', parseHost),
    lite: values.has('lite'),
    logLevel: one('log-level', (raw) => parseEnum(raw, LOG_LEVELS)),
    logFormat: one('log-format', (raw) => parseEnum<LogFormat>(raw.toLowerCase(), ['text', 'json'])),
    printConfig: values.has('print-config'),
    showSecrets: values.has('show-secrets'),
    version: values.has('version'),
    help: values.has('help'),
    given,
  };
}

function check<T>(name: string, parse: (raw: string) => Parsed<T>, raw: string): T {
  const parsed = parse(raw);
  if (!parsed.ok) throw new ConfigError(`flag --${name}`, expectedGot(parsed.expected, raw));
  return parsed.value;
}

/** Applies the flags over the draft (highest precedence). */
export function applyFlags(draft: Draft, flags: ParsedFlags): void {
  if (flags.port !== null) setMemberPort(draft, flags.port);
  if (flags.clusterName !== null) draft.clusterName = flags.clusterName;
  if (flags.instanceName !== null) draft.instanceName = flags.instanceName;
  if (flags.members.length > 0) {
    draft.network.join.tcpIp.enabled = true;
    draft.network.join.tcpIp.members = [...flags.members];
  }
  if (flags.rest || flags.restGroups.length > 0) draft.network.restApi.enabled = true;
  for (const g of flags.restGroups) {
    // The groups apply wherever REST is served: the member port and a declared REST endpoint.
    draft.network.restApi.groups[g] = true;
    if (draft.advancedNetwork.restEndpoint !== null) draft.advancedNetwork.restEndpoint.groups[g] = true;
  }
  if (flags.publicAddress !== null) draft.network.publicAddress = flags.publicAddress;
  if (flags.lite) draft.liteMember = true;
  if (flags.logLevel !== null) draft.logging.level = flags.logLevel;
  if (flags.logFormat !== null) draft.logging.format = flags.logFormat;
}

/** The `--help` text: usage, every flag, and where else configuration comes from. */
export function helpText(version: string): string {
  const usage = FLAG_SPECS.map((f) => `[--${f.name}${f.value === null ? '' : ` ${f.value}`}]${f.repeatable === true ? '...' : ''}`).join(' ');
  const width = Math.max(...FLAG_SPECS.map((f) => f.name.length + (f.value === null ? 0 : f.value.length + 1))) + 4;
  const lines = FLAG_SPECS.map((f) => `  ${`--${f.name}${f.value === null ? '' : ` ${f.value}`}`.padEnd(width)}${f.help}`);
  return [
    `Grid member ${version}`,
    '',
    `Usage: node dist/member.js ${usage}`,
    '',
    'Flags (also accepted as --flag=value):',
    ...lines,
    '',
    'Precedence: built-in defaults < XML file < GRID_* environment variables < flags.',
    'Environment: GRID_ + element path in upper case, levels joined by _, dashes dropped',
    '  (GRID_CLUSTERNAME, GRID_NETWORK_PORT_PORT, GRID_MAP_<NAME>_BACKUPCOUNT, GRID_PROPERTY_GRID_PARTITION_COUNT, ...).',
    'Configuration errors exit with status 2. See docs/config.md for every element, property and variable.',
    '',
  ].join('\n');
}
