// The one error the configuration loader raises for bad input. Its message is a single line that
// starts with where the bad value came from (`/etc/grid.xml:12:5`, `environment variable GRID_X`,
// `flag --port`) so that start-up can print it as is after `grid: config error: `.
import { GridError } from '../util/errors.js';

export class ConfigError extends GridError {
  override name = 'ConfigError';

  /** `new ConfigError(where, what)` reads `where: what`; with one argument it is the whole message. */
  constructor(where: string, what?: string) {
    // Values are quoted with JSON escapes already; this keeps the promise of one line regardless.
    super('ERR_CONFIG_INVALID', (what === undefined ? where : `${where}: ${what}`).replace(/[\r\n]+/g, ' '));
  }
}
