// Screen 3, Charts: 15 minutes of each series from the members' own rings (so a reload or another
// member's page shows the same past): the median of the members, the 3 members farthest from it,
// and any member pinned; a mark at each timeline event.
import { distance, lineChart, medianLine, type Line } from '../chart.js';
import { fill, h } from '../dom.js';
import { bytes, rate } from '../format.js';
import { answeredNote, Panel } from '../panel.js';
import type { Ctx, Screen } from '../screen.js';
import { getJson } from '../api.js';
import { eventsView, MemberNames, clusterView, type GridEvent, type HistoryView } from '../views.js';

interface Series {
  readonly name: string;
  readonly title: string;
  readonly format: (v: number) => string;
}

const ms = (v: number): string => `${v.toFixed(v < 10 ? 1 : 0)} ms`;
const num = (v: number): string => Math.round(v).toLocaleString('en-US');

export const SERIES: readonly Series[] = [
  { name: 'mapGetsPerSecond', title: 'Map gets per second', format: rate },
  { name: 'mapPutsPerSecond', title: 'Map puts per second', format: rate },
  { name: 'queueOffersPerSecond', title: 'Queue offers per second', format: rate },
  { name: 'queuePollsPerSecond', title: 'Queue polls per second', format: rate },
  { name: 'clientCallsPerSecond', title: 'Client calls per second', format: rate },
  { name: 'cpCallsPerSecond', title: 'CP calls per second', format: rate },
  { name: 'requestLatencyP99Ms', title: 'REST latency p99', format: ms },
  { name: 'entries', title: 'Map entries owned', format: num },
  { name: 'rssBytes', title: 'Resident memory', format: bytes },
  { name: 'heapUsedBytes', title: 'Heap used', format: bytes },
  { name: 'eventLoopDelayP99Ms', title: 'Event-loop delay p99', format: ms },
];

const WINDOW_MS = 15 * 60_000;
const OUTLIERS = 3;
const PINNED_KEY = 'grid-console-pinned';

export function chartsScreen(_ctx: Ctx): Screen {
  const names = new MemberNames();
  const pinned = new Set<string>(JSON.parse(localStorage.getItem(PINNED_KEY) ?? '[]') as string[]);
  const pins = new Panel('Members');
  const panels = SERIES.map((x) => new Panel(x.title, { 'data-series': x.name }));
  const root = h('div', { 'data-screen': 'charts' }, h('h1', {}, 'Charts'), h('p', { class: 'hint' }, 'Each chart: the median of the members, the three members farthest from it, and any member pinned below. Vertical marks are timeline events.'), pins.el, h('div', { class: 'charts' }, ...panels.map((p) => p.el)));

  const drawPins = (uuids: readonly string[]): void => {
    fill(
      pins.body,
      h(
        'fieldset',
        { class: 'pins' },
        h('legend', {}, 'Pin members to every chart'),
        ...uuids.map((u) => {
          const id = `pin-${u}`;
          const box = h('input', { type: 'checkbox', id, checked: pinned.has(u) });
          box.addEventListener('change', () => {
            if (box.checked) pinned.add(u);
            else pinned.delete(u);
            localStorage.setItem(PINNED_KEY, JSON.stringify([...pinned]));
          });
          return h('span', { class: 'pin' }, box, h('label', { for: id }, names.name(u)));
        }),
      ),
    );
  };

  // The past of each series, kept here: a refresh asks each series only for the points after the
  // last one the page holds (`since`), one per member per step instead of 15 minutes of them.
  const kept = new Map<string, Map<string, [number, number][]>>(SERIES.map((x) => [x.name, new Map()]));
  const fetchSeries = async (x: Series): Promise<HistoryView> => {
    const held = kept.get(x.name) as Map<string, [number, number][]>;
    const lasts = [...held.values()].map((p) => p[p.length - 1]?.[0] ?? 0);
    const since = lasts.length === 0 ? null : Math.min(...lasts);
    const hv = await getJson<HistoryView>(`/grid/rest/metrics/history?series=${x.name}${since === null || since === 0 ? '' : `&since=${since}`}`);
    const from = Date.now() - WINDOW_MS;
    for (const [u, points] of Object.entries(hv.members)) {
      const mine = held.get(u) ?? [];
      const last = mine[mine.length - 1]?.[0] ?? -Infinity;
      for (const p of points) if (p[0] > last) mine.push([p[0], p[1]]);
      held.set(u, mine.filter(([t]) => t >= from));
    }
    for (const [u, mine] of held) if (mine.length === 0 || (mine[mine.length - 1] as [number, number])[0] < from) held.delete(u);
    return { ...hv, members: Object.fromEntries(held) };
  };

  const drawSeries = (x: Series, panel: Panel, hv: HistoryView, events: readonly GridEvent[]): void => {
    const now = Date.now();
    const from = now - WINDOW_MS;
    const all = Object.entries(hv.members);
    const median = medianLine(all.map(([, p]) => p), hv.stepMs);
    const far = all
      .map(([u, p]) => [u, distance(p, median, hv.stepMs)] as const)
      .filter(([, d]) => d > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, OUTLIERS)
      .map(([u]) => u);
    const shown = [...new Set([...far, ...[...pinned].filter((u) => hv.members[u] !== undefined)])];
    const lines: Line[] = [{ label: 'median of the members', cls: 'median', points: median }, ...shown.map((u, i) => ({ label: names.name(u), cls: `ln${i % 6}`, points: hv.members[u] ?? [] }))];
    const last = median[median.length - 1];
    fill(
      panel.body,
      answeredNote(hv, (u) => names.name(u)),
      lineChart(x.title, lines, events.map((e) => ({ timeMs: e.timeMs, label: `${e.kind}: ${e.message}` })), from, now, x.format),
      h('ul', { class: 'chart-legend' }, ...lines.map((l) => h('li', {}, h('span', { class: `key ${l.cls}`, 'aria-hidden': 'true' }), l.label, pinned.has(l.label) ? ' (pinned)' : ''))),
      h('p', { class: 'hint' }, last === undefined ? 'no samples yet' : `median now ${x.format(last[1])}`),
    );
  };

  return {
    root,
    panels: [pins, ...panels],
    refresh: async () => {
      let events: readonly GridEvent[] = [];
      try {
        const v = await clusterView();
        names.learn(v.members);
        drawPins(v.members.map((m) => m.uuid));
        pins.ok();
        events = (await eventsView(200)).events;
      } catch (e) {
        pins.failed(e instanceof Error ? e.message : String(e));
      }
      await Promise.all(
        SERIES.map(async (x, i) => {
          const panel = panels[i] as Panel;
          try {
            drawSeries(x, panel, await fetchSeries(x), events);
            panel.ok();
          } catch (e) {
            panel.failed(e instanceof Error ? e.message : String(e));
          }
        }),
      );
    },
  };
}
