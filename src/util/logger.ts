// A levelled logger writing one line per event to stdout: time, level, member address, component,
// message; or one JSON object per line. Levels are the reference's (SEVERE … FINEST, OFF). The level
// can be overridden at run time (REST log-level) and reset back to the configured one.
export const LOG_LEVELS = ['OFF', 'SEVERE', 'WARNING', 'INFO', 'CONFIG', 'FINE', 'FINER', 'FINEST'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = 'text' | 'json';

const SEVERITY: Readonly<Record<LogLevel, number>> = {
  OFF: Number.MAX_SAFE_INTEGER,
  SEVERE: 1000,
  WARNING: 900,
  INFO: 800,
  CONFIG: 700,
  FINE: 500,
  FINER: 400,
  FINEST: 300,
};

export function parseLogLevel(text: string): LogLevel | null {
  const upper = text.trim().toUpperCase();
  return (LOG_LEVELS as readonly string[]).includes(upper) ? (upper as LogLevel) : null;
}

export interface LogSink {
  write(line: string): void;
}

export class Logger {
  private readonly configuredLevel: LogLevel;
  private overrideLevel: LogLevel | null = null;
  private threshold: number;
  private memberAddress = '-';

  constructor(
    level: LogLevel,
    private readonly format: LogFormat,
    private readonly sink: LogSink,
    private readonly now: () => number = Date.now,
  ) {
    this.configuredLevel = level;
    this.threshold = SEVERITY[level];
  }

  setMemberAddress(address: string): void {
    this.memberAddress = address;
  }

  /** The level set at run time, or null when the configured level is in force. */
  get runtimeLevel(): LogLevel | null {
    return this.overrideLevel;
  }

  get effectiveLevel(): LogLevel {
    return this.overrideLevel ?? this.configuredLevel;
  }

  setRuntimeLevel(level: LogLevel): void {
    this.overrideLevel = level;
    this.threshold = SEVERITY[level];
  }

  resetLevel(): void {
    this.overrideLevel = null;
    this.threshold = SEVERITY[this.configuredLevel];
  }

  isEnabled(level: LogLevel): boolean {
    return level !== 'OFF' && SEVERITY[level] >= this.threshold;
  }

  log(level: LogLevel, component: string, message: string, fields?: Readonly<Record<string, unknown>>): void {
    if (!this.isEnabled(level)) return;
    const time = new Date(this.now()).toISOString();
    if (this.format === 'json') {
      this.sink.write(JSON.stringify({ time, level, member: this.memberAddress, component, message, ...fields }) + '\n');
    } else {
      const extra = fields === undefined ? '' : ' ' + JSON.stringify(fields);
      this.sink.write(`${time} ${level.padEnd(7)} ${this.memberAddress} [${component}] ${message}${extra}\n`);
    }
  }

  component(name: string): ComponentLogger {
    return new ComponentLogger(this, name);
  }
}

/** A logger bound to one component name, so call sites stay short. */
export class ComponentLogger {
  constructor(
    private readonly root: Logger,
    private readonly name: string,
  ) {}
  severe(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.root.log('SEVERE', this.name, message, fields);
  }
  warning(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.root.log('WARNING', this.name, message, fields);
  }
  info(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.root.log('INFO', this.name, message, fields);
  }
  config(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.root.log('CONFIG', this.name, message, fields);
  }
  fine(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.root.log('FINE', this.name, message, fields);
  }
  isFineEnabled(): boolean {
    return this.root.isEnabled('FINE');
  }
}
