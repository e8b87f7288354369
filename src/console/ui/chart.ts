// A line chart in SVG (no library): lines over a time window, a vertical mark at each event, the
// largest value and the window's ends as labels. Colours come from classes (console.css), so both
// themes and the CSP (no inline styles) hold.
import { s } from './dom.js';
import { clock } from './format.js';

export interface Line {
  readonly label: string;
  readonly cls: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface Mark {
  readonly timeMs: number;
  readonly label: string;
}

const W = 640;
const H = 160;
const PAD_L = 56;
const PAD_B = 18;
const PAD_T = 8;

export function lineChart(title: string, lines: readonly Line[], marks: readonly Mark[], fromMs: number, toMs: number, format: (v: number) => string): SVGElement {
  let max = 0;
  for (const l of lines) for (const [, v] of l.points) if (v > max) max = v;
  const top = max <= 0 ? 1 : max * 1.1;
  const x = (t: number): number => PAD_L + ((t - fromMs) / Math.max(1, toMs - fromMs)) * (W - PAD_L - 4);
  const y = (v: number): number => PAD_T + (1 - v / top) * (H - PAD_T - PAD_B);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': title });
  svg.append(s('title', {}, title));
  svg.append(s('line', { x1: PAD_L, y1: y(0), x2: W - 4, y2: y(0), class: 'axis' }));
  svg.append(s('line', { x1: PAD_L, y1: PAD_T, x2: PAD_L, y2: y(0), class: 'axis' }));
  svg.append(s('text', { x: PAD_L - 4, y: PAD_T + 8, class: 'tick', 'text-anchor': 'end' }, format(top)));
  svg.append(s('text', { x: PAD_L - 4, y: y(0), class: 'tick', 'text-anchor': 'end' }, '0'));
  svg.append(s('text', { x: PAD_L, y: H - 4, class: 'tick' }, clock(fromMs)));
  svg.append(s('text', { x: W - 4, y: H - 4, class: 'tick', 'text-anchor': 'end' }, clock(toMs)));
  for (const m of marks) {
    if (m.timeMs < fromMs || m.timeMs > toMs) continue;
    const mark = s('line', { x1: x(m.timeMs), y1: PAD_T, x2: x(m.timeMs), y2: y(0), class: 'event-mark', 'data-mark': '' });
    mark.append(s('title', {}, `${clock(m.timeMs)} ${m.label}`));
    svg.append(mark);
  }
  for (const l of lines) {
    const pts = l.points.filter(([t]) => t >= fromMs && t <= toMs);
    if (pts.length === 0) continue;
    const path = s('polyline', { points: pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' '), class: `line ${l.cls}` });
    path.append(s('title', {}, l.label));
    svg.append(path);
  }
  return svg;
}

/** The median of each time step over the members' series (aligned to the step). */
export function medianLine(series: readonly (readonly (readonly [number, number])[])[], stepMs: number): [number, number][] {
  const byStep = new Map<number, number[]>();
  for (const points of series) {
    for (const [t, v] of points) {
      const k = Math.round(t / stepMs);
      let list = byStep.get(k);
      if (list === undefined) byStep.set(k, (list = []));
      list.push(v);
    }
  }
  return [...byStep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([k, vs]) => {
      vs.sort((a, b) => a - b);
      const mid = Math.floor(vs.length / 2);
      const m = vs.length % 2 === 1 ? (vs[mid] as number) : ((vs[mid - 1] as number) + (vs[mid] as number)) / 2;
      return [k * stepMs, m];
    });
}

/** How far a member's series lies from the median: the mean absolute difference over shared steps. */
export function distance(points: readonly (readonly [number, number])[], median: readonly (readonly [number, number])[], stepMs: number): number {
  const m = new Map(median.map(([t, v]) => [Math.round(t / stepMs), v]));
  let sum = 0;
  let n = 0;
  for (const [t, v] of points) {
    const mv = m.get(Math.round(t / stepMs));
    if (mv === undefined) continue;
    sum += Math.abs(v - mv);
    n++;
  }
  return n === 0 ? 0 : sum / n;
}
