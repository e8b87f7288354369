// A STRICT parser of the Prometheus text exposition format 0.0.4, written for the tests, independent
// of the encoder (src/http/prometheus.ts): it throws on the first line that breaks a rule, naming
// the line. Rules checked, from the format's description:
// - the text ends with a line feed; lines are `# HELP`, `# TYPE`, other comments, empty, or samples;
// - metric names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* (no `__` prefix);
// - every sample belongs to a family whose HELP and TYPE lines came before it (stricter than the
//   format, which only asks TYPE to come first: the member always writes both); HELP and TYPE at
//   most once per family; all lines of a family in one group;
// - counter and gauge samples carry the family name; histogram samples are `_bucket` (with `le`),
//   `_sum` and `_count`; counter family names end in `_total` (the member's rule);
// - label values are quoted, with only `\\`, `\"` and `\n` as escapes; no label twice in a sample;
// - values are Go floats (or +Inf, -Inf, NaN); an optional integer timestamp;
// - no series (name + label set) twice;
// - histogram buckets per series: cumulative over increasing `le`, ending with `le="+Inf"`, which
//   equals `_count`; `_sum` and `_count` present.

export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {}

export function parseExposition(text: string): Map<string, ParsedFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError('the text does not end with a line feed');
  const lines = text.split('\n');
  lines.pop();
  const families = new Map<string, ParsedFamily & { typeSeen: boolean; helpSeen: boolean }>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: string | null = null;
  const fail = (n: number, why: string): never => {
    throw new ExpositionError(`line ${n + 1}: ${why}: ${JSON.stringify(lines[n])}`);
  };
  const enter = (n: number, name: string): void => {
    if (current === name) return;
    if (current !== null) closed.add(current);
    if (closed.has(name)) fail(n, `family ${name} continues after another family (its lines must form one group)`);
    current = name;
  };
  lines.forEach((line, n) => {
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
      if (m === null) return; // another comment
      const [, keyword, name, rest] = m as unknown as [string, string, string, string | undefined];
      if (!METRIC_NAME.test(name)) fail(n, `metric name ${name} is not valid`);
      enter(n, name);
      let f = families.get(name);
      if (f === undefined) families.set(name, (f = { name, help: '', type: 'untyped', samples: [], typeSeen: false, helpSeen: false }));
      if (keyword === 'HELP') {
        if (f.helpSeen) fail(n, `second HELP for ${name}`);
        (f as { help: string }).help = unescapeHelp(rest ?? '', () => fail(n, 'bad escape in HELP'));
        f.helpSeen = true;
      } else {
        if (f.typeSeen) fail(n, `second TYPE for ${name}`);
        if (f.samples.length > 0) fail(n, `TYPE for ${name} after its samples`);
        const type = (rest ?? '').trim();
        if (!TYPES.has(type)) fail(n, `unknown type ${type}`);
        (f as { type: string }).type = type;
        f.typeSeen = true;
      }
      return;
    }
    const sample = parseSample(line, () => fail(n, 'malformed sample'), (why) => fail(n, why));
    const family = familyOf(sample.name, families);
    if (family === undefined) return fail(n, `sample ${sample.name} belongs to no family declared before it`);
    if (!family.helpSeen || !family.typeSeen) fail(n, `family ${family.name} lacks HELP or TYPE before its samples`);
    enter(n, family.name);
    if (family.type === 'counter' && !family.name.endsWith('_total')) fail(n, `counter ${family.name} does not end in _total`);
    if (family.type === 'histogram') {
      const suffix = sample.name.slice(family.name.length);
      if (!['_bucket', '_sum', '_count'].includes(suffix)) fail(n, `histogram sample ${sample.name} is not _bucket, _sum or _count`);
      if ((suffix === '_bucket') !== ('le' in sample.labels)) fail(n, 'le belongs on _bucket samples only, and every _bucket has one');
    } else if (sample.name !== family.name) {
      fail(n, `sample ${sample.name} does not carry its family's name ${family.name}`);
    }
    const key = seriesKey(sample);
    if (series.has(key)) fail(n, `series ${key} appears twice`);
    series.add(key);
    family.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return new Map([...families].map(([k, f]) => [k, { name: f.name, help: f.help, type: f.type, samples: f.samples }]));
}

/** The family a sample name belongs to: itself, or a histogram/summary name without its suffix. */
function familyOf<F extends ParsedFamily>(name: string, families: Map<string, F>): F | undefined {
  const direct = families.get(name);
  if (direct !== undefined && direct.type !== 'histogram') return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f !== undefined && (f.type === 'histogram' || f.type === 'summary')) return f;
  }
  return direct;
}

function parseSample(line: string, malformed: () => never, fail: (why: string) => never): ParsedSample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (nameMatch === null) malformed();
  const name = (nameMatch as RegExpExecArray)[0];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      if (line[i] === '}') {
        i++;
        break;
      }
      const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
      if (labelMatch === null) fail('bad label name');
      const label = (labelMatch as RegExpExecArray)[0];
      if (!LABEL_NAME.test(label) || label.startsWith('__')) fail(`label name ${label} is not valid`);
      if (label in labels) fail(`label ${label} twice`);
      i += label.length;
      if (line[i] !== '=' || line[i + 1] !== '"') fail('label value must follow =" ');
      i += 2;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) fail('unterminated label value');
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\') {
          const e = line[i + 1];
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else fail('bad escape in a label value');
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      labels[label] = value;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') fail('expected , or } after a label');
    }
  }
  const rest = line.slice(i);
  const m = /^[ \t]+(\S+)(?:[ \t]+(-?\d+))?$/.exec(rest);
  if (m === null) malformed();
  const valueText = (m as RegExpExecArray)[1] as string;
  if (!FLOAT.test(valueText)) fail(`value ${valueText} is not a float`);
  const value = valueText.endsWith('Inf') ? (valueText.startsWith('-') ? -Infinity : Infinity) : Number(valueText);
  return { name, labels, value };
}

function unescapeHelp(text: string, bad: () => never): string {
  return text.replace(/\\(.)?/g, (_m, c: string | undefined) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    return bad();
  });
}

function seriesKey(s: ParsedSample, without?: string): string {
  const pairs = Object.entries(s.labels)
    .filter(([k]) => k !== without)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${without === undefined ? s.name : ''}{${pairs.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}

function checkHistogram(f: ParsedFamily): void {
  const bySeries = new Map<string, { buckets: [number, number][]; sum: number | null; count: number | null }>();
  for (const s of f.samples) {
    const key = seriesKey(s, 'le');
    let h = bySeries.get(key);
    if (h === undefined) bySeries.set(key, (h = { buckets: [], sum: null, count: null }));
    if (s.name.endsWith('_bucket')) {
      const le = s.labels.le as string;
      if (!FLOAT.test(le)) throw new ExpositionError(`${f.name}${key}: le="${le}" is not a float`);
      h.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
    } else if (s.name.endsWith('_sum')) h.sum = s.value;
    else h.count = s.value;
  }
  for (const [key, h] of bySeries) {
    const where = `${f.name}${key}`;
    if (h.sum === null || h.count === null) throw new ExpositionError(`${where}: _sum or _count missing`);
    if (h.buckets.length === 0) throw new ExpositionError(`${where}: no buckets`);
    for (let i = 1; i < h.buckets.length; i++) {
      const [le0, c0] = h.buckets[i - 1] as [number, number];
      const [le1, c1] = h.buckets[i] as [number, number];
      if (!(le1 > le0)) throw new ExpositionError(`${where}: bucket bounds do not increase (${le0}, ${le1})`);
      if (c1 < c0) throw new ExpositionError(`${where}: bucket counts are not cumulative (${c0}, ${c1})`);
    }
    const last = h.buckets[h.buckets.length - 1] as [number, number];
    if (last[0] !== Infinity) throw new ExpositionError(`${where}: the last bucket is not le="+Inf"`);
    if (last[1] !== h.count) throw new ExpositionError(`${where}: the +Inf bucket (${last[1]}) differs from _count (${h.count})`);
  }
}

/** The value of the one sample of `family` whose labels include `labels`; throws when not exactly one. */
export function sampleValue(families: Map<string, ParsedFamily>, family: string, labels: Readonly<Record<string, string>> = {}, name = family): number {
  const f = families.get(family);
  if (f === undefined) throw new Error(`no family ${family}`);
  const found = f.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return (found[0] as ParsedSample).value;
}
