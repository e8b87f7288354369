// The Prometheus text exposition format, version 0.0.4, as a pure function from metric families to
// text: no I/O, no clock. Per family: `# HELP`, `# TYPE`, then its samples, each
// `name{label="value",...} value`. Histograms write `_bucket{le="..."}` lines (cumulative, the last
// one `le="+Inf"`), then `_sum` and `_count`.
//
// Invariants, checked with assert (a broken one is a bug in the catalog, not an operating error):
// names match [a-zA-Z_:][a-zA-Z0-9_:]*; label names match [a-zA-Z_][a-zA-Z0-9_]* and do not start
// with `__`; counter names end in `_total`; a histogram's cumulative counts never decrease and the
// +Inf one equals its count; no family name is used twice.
import { assert } from '../util/assert.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** Label pairs in output order. */
export type Labels = readonly (readonly [string, string])[];

export interface ScalarSample {
  readonly labels: Labels;
  readonly value: number;
}

export interface HistogramSample {
  readonly labels: Labels;
  /** Upper bounds of the buckets, increasing, +Inf not included. */
  readonly bounds: readonly number[];
  /** Cumulative counts: one per bound, then one for +Inf. */
  readonly cumulative: readonly number[];
  readonly sum: number;
  readonly count: number;
}

export type Family =
  | { readonly name: string; readonly help: string; readonly type: 'counter' | 'gauge'; readonly samples: readonly ScalarSample[] }
  | { readonly name: string; readonly help: string; readonly type: 'histogram'; readonly samples: readonly HistogramSample[] };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Text of every family, each sample carrying `common` labels first (e.g. the member's address). */
export function encodeExposition(families: readonly Family[], common: Labels): string {
  for (const [name] of common) checkLabelName(name);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of families) {
    assert(METRIC_NAME.test(f.name), `metric name ${f.name} is not valid`);
    assert(!seen.has(f.name), `metric family ${f.name} appears twice`);
    seen.add(f.name);
    if (f.type === 'counter') assert(f.name.endsWith('_total'), `counter ${f.name} must end in _total`);
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`);
    if (f.type === 'histogram') {
      for (const s of f.samples) out.push(histogramLines(f.name, s, common));
    } else {
      for (const s of f.samples) out.push(`${f.name}${labelText(common, s.labels, null)} ${formatValue(s.value)}\n`);
    }
  }
  return out.join('');
}

function histogramLines(name: string, s: HistogramSample, common: Labels): string {
  assert(s.cumulative.length === s.bounds.length + 1, `${name}: one cumulative count per bound and one for +Inf`);
  assert(s.cumulative[s.bounds.length] === s.count, `${name}: the +Inf bucket equals the count`);
  let text = '';
  let previousCount = 0;
  let previousBound = -Infinity;
  for (let i = 0; i <= s.bounds.length; i++) {
    const bound = i < s.bounds.length ? (s.bounds[i] as number) : Infinity;
    const count = s.cumulative[i] as number;
    assert(bound > previousBound, `${name}: bucket bounds increase`);
    assert(count >= previousCount, `${name}: bucket counts are cumulative`);
    previousBound = bound;
    previousCount = count;
    text += `${name}_bucket${labelText(common, s.labels, formatValue(bound))} ${formatValue(count)}\n`;
  }
  const labels = labelText(common, s.labels, null);
  return `${text}${name}_sum${labels} ${formatValue(s.sum)}\n${name}_count${labels} ${formatValue(s.count)}\n`;
}

function labelText(common: Labels, own: Labels, le: string | null): string {
  if (common.length === 0 && own.length === 0 && le === null) return '';
  const parts: string[] = [];
  for (const [k, v] of common) parts.push(`${k}="${escapeLabelValue(v)}"`);
  for (const [k, v] of own) {
    checkLabelName(k);
    assert(k !== 'le', 'le is reserved for histogram buckets');
    parts.push(`${k}="${escapeLabelValue(v)}"`);
  }
  if (le !== null) parts.push(`le="${le}"`);
  return `{${parts.join(',')}}`;
}

function checkLabelName(name: string): void {
  assert(LABEL_NAME.test(name) && !name.startsWith('__'), `label name ${name} is not valid`);
}

/** Label values escape backslash, double quote and line feed (the 0.0.4 text format). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** HELP text escapes backslash and line feed only. */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value or bucket bound as the format spells it: Go float syntax, +Inf, -Inf, NaN. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}
