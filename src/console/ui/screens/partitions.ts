// Screen 2, Partitions: every partition as a cell coloured by its owner, marked when it migrates,
// has no owner or no backup; focus or hover names its replicas. Arrow keys move between cells (one
// tab stop for the whole grid). The table is the master's (docs/rest.md "Cluster views").
import { fill, h } from '../dom.js';
import { count } from '../format.js';
import { Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { clusterView, MemberNames, partitionsView, type PartitionsView } from '../views.js';

const PER_ROW = 20;
/** Member colours (console.css .mc0 … .mc11); more members reuse them, the legend and focus name them. */
const COLOURS = 12;

export function partitionsScreen(_ctx: Ctx): Screen {
  const panel = new Panel('Partition table');
  const progress = new Panel('Migrations');
  const detail = h('p', { class: 'cell-detail', 'aria-live': 'polite' }, 'Focus or hover a partition to name its replicas.');
  const root = h('div', { 'data-screen': 'partitions' }, h('h1', {}, 'Partitions'), progress.el, panel.el);
  const names = new MemberNames();
  let focusId = 0;
  let colourOf = new Map<string, number>();

  const describe = (p: PartitionsView['partitions'][number]): string => {
    const [owner, ...backups] = p.replicas;
    const b = backups.filter((u): u is string => u !== null);
    return `partition ${p.id}: owner ${owner === null || owner === undefined ? 'none' : names.name(owner)}; backups ${b.length === 0 ? 'none' : b.map((u) => names.name(u)).join(', ')}${p.migrating ? '; migrating' : ''}`;
  };

  const draw = (t: PartitionsView, order: readonly string[]): void => {
    colourOf = new Map(order.map((u, i) => [u, i % COLOURS]));
    const dataMembers = new Set(t.partitions.flatMap((p) => p.replicas.filter((u): u is string => u !== null)));
    const rows: HTMLElement[] = [];
    let row: HTMLElement | null = null;
    let unowned = 0;
    let noBackup = 0;
    for (const p of t.partitions) {
      if (p.id % PER_ROW === 0) {
        row = h('div', { role: 'row', class: 'prow' });
        rows.push(row);
      }
      const owner = p.replicas[0] ?? null;
      const backups = p.replicas.slice(1).filter((u) => u !== null).length;
      if (owner === null) unowned++;
      else if (backups === 0 && dataMembers.size > 1 && p.replicas.length > 1) noBackup++;
      const classes = ['pcell', owner === null ? 'unowned' : `mc${colourOf.get(owner) ?? 0}`];
      if (owner !== null && backups === 0 && dataMembers.size > 1 && p.replicas.length > 1) classes.push('nobackup');
      if (p.migrating) classes.push('migrating');
      const cell = h(
        'div',
        {
          role: 'gridcell',
          class: classes.join(' '),
          tabindex: p.id === focusId ? 0 : -1,
          'data-partition': '',
          'data-partition-id': p.id,
          'data-owner': owner ?? '',
          'data-migrating': p.migrating ? 'true' : 'false',
          title: describe(p),
          'aria-label': describe(p),
        },
        String(p.id),
      );
      cell.addEventListener('focus', () => {
        focusId = p.id;
        fill(detail, describe(p));
      });
      cell.addEventListener('mouseenter', () => fill(detail, describe(p)));
      row?.append(cell);
    }
    const grid = h('div', { role: 'grid', class: 'pgrid', 'aria-label': `${t.partitions.length} partitions, coloured by owner`, 'aria-readonly': 'true' }, ...rows);
    grid.addEventListener('keydown', (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: PER_ROW, ArrowUp: -PER_ROW, Home: -focusId, End: t.partitions.length - 1 - focusId }[e.key];
      if (step === undefined) return;
      e.preventDefault();
      const next = Math.min(t.partitions.length - 1, Math.max(0, focusId + step));
      const cells = grid.querySelectorAll<HTMLElement>('[data-partition]');
      cells[focusId]?.setAttribute('tabindex', '-1');
      const target = cells[next];
      if (target !== undefined) {
        target.setAttribute('tabindex', '0');
        target.focus();
      }
    });
    const legend = h(
      'ul',
      { class: 'legend' },
      ...order.map((u) => h('li', {}, h('span', { class: `swatch mc${colourOf.get(u) ?? 0}`, 'aria-hidden': 'true' }), `${names.name(u)} (${count(t.partitions.filter((p) => p.replicas[0] === u).length)} owned)`)),
      h('li', {}, h('span', { class: 'swatch unowned', 'aria-hidden': 'true' }), `no owner (${unowned})`),
      h('li', {}, h('span', { class: 'swatch nobackup', 'aria-hidden': 'true' }), `no backup (${noBackup})`),
      h('li', {}, h('span', { class: 'swatch migrating', 'aria-hidden': 'true' }), `migrating (${t.partitions.filter((p) => p.migrating).length})`),
    );
    fill(panel.body, h('p', { class: 'hint' }, `Table version ${t.version}, as ${names.name(t.from)} holds it.`), legend, grid, detail);
    const done = t.migrations.completed;
    const planned = t.migrations.planned;
    fill(
      progress.body,
      h('p', {}, `${count(planned)} migration(s) planned; ${count(done)} completed since the master took over.`),
      planned > 0 ? h('progress', { max: planned + done, value: done, 'aria-label': 'migration progress' }) : null,
    );
  };

  return {
    root,
    panels: [panel, progress],
    refresh: async () => {
      await guarded([panel, progress], async () => {
        const [t, v] = await Promise.all([partitionsView(), clusterView()]);
        names.learn(v.members);
        draw(t, v.members.filter((m) => !m.lite).map((m) => m.uuid));
      });
    },
  };
}
