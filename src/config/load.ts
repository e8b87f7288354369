// The configuration entry point, pure: argv, environment, working directory and the few I/O
// functions it needs come in; a frozen Config (or what to print and the exit status) comes out.
// Order: flags are parsed first (so --help/--version never depend on the file), then the file is
// found and read, then defaults < XML < environment < flags are applied, the whole is validated,
// and the result is deep-frozen. Any bad input ends as one line on stderr and exit status 2.
import type { LocalInterface } from './bind-address.js';
import { ConfigError } from './config-error.js';
import { defaultDraft, type Draft, type Origins } from './draft.js';
import { applyEnv, ENV_CONFIG, type Env } from './env.js';
import { applyFlags, helpText, parseFlags, type ParsedFlags } from './flags.js';
import { joinPath } from './paths.js';
import { printConfig } from './print.js';
import { applyXml } from './schema.js';
import type { Config } from './types.js';
import { ALL_FEATURES, validate, type FeatureSupport } from './validate.js';
export type { FeatureSupport } from './validate.js';
import { parseXml, XmlParseError } from './xml.js';

export interface LoadInput {
  /** Arguments after `node` and the script. */
  readonly argv: readonly string[];
  readonly env: Env;
  readonly cwd: string;
  /** Returns the file's text; throws when it cannot be read. */
  readFile(path: string): string;
  fileExists(path: string): boolean;
  /** `bytes` random bytes as lower-case hex, for the generated instance name. */
  randomHex(bytes: number): string;
  readonly version: string;
  /** Whether a key/certificate file can be read; defaults to trying readFile. */
  fileReadable?: (path: string) => boolean;
  /**
   * Features the running program can actually run. A configuration that enables one it cannot run is
   * refused with the location of the setting, rather than accepted and silently not honoured.
   * Omitted: everything is accepted (the loader's own tests use that).
   */
  readonly supports?: FeatureSupport;
  /**
   * The machine's addresses (the runtime passes os.networkInterfaces(), flattened): `<interfaces>`
   * that match none of them are refused here, with their position. Omitted: that check is skipped
   * (the loader's own tests use that; the running member always passes them).
   */
  readonly localInterfaces?: readonly LocalInterface[];
}

export type LoadResult =
  | {
      readonly kind: 'run';
      readonly config: Config;
      /** To log at WARNING. */
      readonly warnings: string[];
      /** To log at INFO: how valid settings will be run (validate.ts, Findings). */
      readonly notices: string[];
      readonly sourceNote: string;
    }
  | { readonly kind: 'exit'; readonly code: 0 | 2; readonly stdout: string; readonly stderr: string };

export const CONFIG_ERROR_PREFIX = 'grid: config error: ';

export function loadConfig(input: LoadInput): LoadResult {
  try {
    const flags = parseFlags(input.argv);
    if (flags.help) return { kind: 'exit', code: 0, stdout: helpText(input.version), stderr: '' };
    if (flags.version) return { kind: 'exit', code: 0, stdout: `${input.version}\n`, stderr: '' };
    const { config, warnings, notices, sourceNote } = build(input, flags);
    if (flags.showSecrets && !flags.printConfig) throw new ConfigError('flag --show-secrets: it only applies with --print-config');
    if (flags.printConfig) return { kind: 'exit', code: 0, stdout: printConfig(config, { showSecrets: flags.showSecrets }), stderr: '' };
    return { kind: 'run', config, warnings, notices, sourceNote };
  } catch (e) {
    // Only our own typed errors are configuration errors; anything else is a bug and should crash loudly.
    if (!(e instanceof ConfigError)) throw e;
    return { kind: 'exit', code: 2, stdout: '', stderr: `${CONFIG_ERROR_PREFIX}${e.message}\n` };
  }
}

interface Located {
  readonly path: string;
  /** How it was chosen, for the start-up log and for messages about reading it. */
  readonly how: 'flag --config' | `environment variable ${typeof ENV_CONFIG}` | 'working directory';
}

/** `--config`, else $GRID_CONFIG, else ./grid.xml if present, else none (defaults only). */
function locate(input: LoadInput, flags: ParsedFlags, warnings: string[]): Located | null {
  if (flags.config !== null) return { path: joinPath(input.cwd, flags.config), how: 'flag --config' };
  const fromEnv = input.env[ENV_CONFIG];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return { path: joinPath(input.cwd, fromEnv), how: `environment variable ${ENV_CONFIG}` };
  const local = joinPath(input.cwd, 'grid.xml');
  if (input.fileExists(local)) return { path: local, how: 'working directory' };
  for (const yaml of ['grid.yaml', 'grid.yml']) {
    if (input.fileExists(joinPath(input.cwd, yaml))) warnings.push(`${yaml} found but YAML configuration is not supported: using built-in defaults`);
  }
  return null;
}

function build(input: LoadInput, flags: ParsedFlags): { config: Config; warnings: string[]; notices: string[]; sourceNote: string } {
  const warnings: string[] = [];
  const origins: Origins = new Map();
  const draft = defaultDraft();
  const located = locate(input, flags, warnings);
  if (located !== null) readFileInto(draft, located, input, origins);
  const envNames = applyEnv(draft, input.env, origins);
  applyFlags(draft, flags);
  if (draft.instanceName === '') draft.instanceName = `grid-${input.randomHex(4)}`;
  draft.source = located?.path ?? 'defaults';
  const fileReadable = input.fileReadable ?? ((path: string) => canRead(input, path));
  const findings = validate(draft, origins, { cwd: input.cwd, fileReadable, supports: input.supports ?? ALL_FEATURES, localInterfaces: input.localInterfaces ?? null });
  warnings.push(...findings.warnings);
  return { config: deepFreeze(draft) as Config, warnings, notices: findings.notices, sourceNote: describeSource(located, input.cwd, envNames, flags) };
}

function readFileInto(draft: Draft, located: Located, input: LoadInput, origins: Origins): void {
  const { path } = located;
  if (/\.ya?ml$/i.test(path)) throw new ConfigError(located.how, `${path}: YAML configuration is not supported, use XML`);
  let text: string;
  try {
    text = input.readFile(path);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new ConfigError(located.how, `cannot read ${JSON.stringify(path)}: ${reason}`);
  }
  let root;
  try {
    root = parseXml(text);
  } catch (e) {
    if (e instanceof XmlParseError) throw new ConfigError(`${path}:${e.line}:${e.column}`, e.reason);
    throw e;
  }
  applyXml(draft, { root, file: path, env: input.env, origins });
}

function canRead(input: LoadInput, path: string): boolean {
  try {
    input.readFile(path);
    return true;
  } catch {
    return false;
  }
}

function describeSource(located: Located | null, cwd: string, envNames: readonly string[], flags: ParsedFlags): string {
  const base = located === null ? `built-in defaults (no --config, no ${ENV_CONFIG}, no grid.xml in ${cwd})` : `${located.path} (from ${located.how})`;
  const overrides: string[] = [];
  if (envNames.length > 0) overrides.push(`environment ${envNames.join(', ')}`);
  const flagNames = flags.given.filter((f) => f !== 'config').map((f) => `--${f}`);
  if (flagNames.length > 0) overrides.push(`flags ${[...new Set(flagNames)].join(' ')}`);
  return overrides.length === 0 ? base : `${base}, overridden by ${overrides.join('; ')}`;
}

/** Freezes an object graph in place; the Config is shared by every module and must not change. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
