// Screen 1, Cluster: name, state, safety, migrations; every member with its figures; who hears whom
// (heartbeat ages); a banner when members disagree on the member list (a split brain).
import { fill, h } from '../dom.js';
import { bytes, count, duration, shortId } from '../format.js';
import { answeredNote, Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { clusterView, MemberNames, type ClusterView, type MemberRow } from '../views.js';

/** How long a member that left stays listed as LEFT. */
const LEFT_SHOWN_MS = 60_000;

interface Known {
  address: string;
  leftAtMs: number | null;
}

export function clusterScreen(ctx: Ctx): Screen {
  const summary = new Panel('Cluster');
  const members = new Panel('Members');
  const matrix = new Panel('Connectivity (last heartbeat age)');
  const banner = h('div', { class: 'banner-slot' });
  const root = h('div', { 'data-screen': 'cluster' }, h('h1', {}, 'Cluster'), banner, summary.el, members.el, matrix.el);
  const known = new Map<string, Known>();
  const names = new MemberNames();

  const draw = (v: ClusterView): void => {
    names.learn(v.members);
    const now = Date.now();
    for (const m of v.members) known.set(m.uuid, { address: m.address, leftAtMs: null });
    const listed = new Set([...v.members.map((m) => m.uuid), ...v.missing]);
    for (const [uuid, k] of known) {
      if (listed.has(uuid)) k.leftAtMs = null;
      else if (k.leftAtMs === null) k.leftAtMs = now;
      else if (now - k.leftAtMs > LEFT_SHOWN_MS) known.delete(uuid);
    }
    fill(
      summary.body,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Name'),
        h('dd', {}, v.clusterName),
        h('dt', {}, 'State'),
        h('dd', { 'data-cluster-state': v.clusterState }, v.clusterState),
        h('dt', {}, 'Cluster-safe'),
        h('dd', { class: v.clusterSafe ? 'good' : 'bad' }, v.clusterSafe ? 'yes' : 'no'),
        h('dt', {}, 'Migrations in progress'),
        h('dd', {}, count(v.migrationsInProgress)),
        h('dt', {}, 'Members'),
        h('dd', {}, count(v.of)),
        h('dt', {}, 'Version'),
        h('dd', {}, [...new Set(v.members.map((m) => m.version))].join(', ')),
      ),
      answeredNote(v, (u) => names.name(u)),
    );
    const row = (m: MemberRow): HTMLTableRowElement =>
      h(
        'tr',
        { 'data-member': '', 'data-uuid': m.uuid, 'data-state': m.state },
        h('th', { scope: 'row' }, m.address, m.uuid === ctx.session.memberUuid ? h('span', { class: 'badge' }, 'this page') : null, m.master ? h('span', { class: 'badge master' }, 'master') : null),
        h('td', { title: m.uuid }, h('code', {}, shortId(m.uuid))),
        h('td', {}, m.state),
        h('td', {}, m.clusterState),
        h('td', {}, m.lite ? 'lite' : 'data'),
        h('td', {}, m.cpMember ? 'yes' : 'no'),
        h('td', {}, m.version),
        h('td', { class: 'num' }, duration(m.uptimeMs)),
        h('td', { class: 'num' }, count(m.ownedPartitions)),
        h('td', { class: 'num' }, count(m.backupPartitions)),
        h('td', { class: 'num' }, bytes(m.rssBytes)),
        h('td', { class: 'num' }, bytes(m.heapUsedBytes)),
        h('td', { class: 'num' }, `${m.eventLoopDelayP99Ms.toFixed(1)} ms`),
      );
    const ghost = (uuid: string, state: 'SUSPECTED' | 'LEFT'): HTMLTableRowElement =>
      h(
        'tr',
        { 'data-member': '', 'data-uuid': uuid, 'data-state': state, class: state === 'LEFT' ? 'left' : 'suspected' },
        h('th', { scope: 'row' }, known.get(uuid)?.address ?? 'unknown address'),
        h('td', { title: uuid }, h('code', {}, shortId(uuid))),
        h('td', { colspan: 11 }, state === 'LEFT' ? 'left the cluster' : 'did not answer'),
      );
    const rows = [...v.members.map(row), ...v.missing.map((u) => ghost(u, 'SUSPECTED')), ...[...known].filter(([, k]) => k.leftAtMs !== null).map(([u]) => ghost(u, 'LEFT'))];
    const heads = ['Address', 'UUID', 'State', 'Cluster state', 'Kind', 'CP', 'Version', 'Uptime', 'Owned', 'Backups', 'RSS', 'Heap', 'Event-loop p99'];
    fill(members.body, h('div', { class: 'scroll' }, h('table', { class: 'grid-table' }, h('thead', {}, h('tr', {}, ...heads.map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, ...rows))));
    const cols = v.members.map((m) => m.uuid);
    const cell = (from: MemberRow, to: string): HTMLTableCellElement => {
      if (from.uuid === to) return h('td', { class: 'self' }, '–');
      const age = from.heartbeatAgeMs[to];
      if (age === undefined) return h('td', { class: 'bad', title: `${from.address} does not list ${names.name(to)}` }, 'not listed');
      return h('td', { class: age < 3000 ? 'good' : age < 10_000 ? 'warn' : 'bad', title: `${from.address} last heard ${names.name(to)} ${duration(age)} ago` }, duration(age));
    };
    fill(
      matrix.body,
      h('p', { class: 'hint' }, 'Each row: how long ago that member last heard each other member.'),
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'grid-table matrix' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'heard by ↓ / from →'), ...cols.map((u) => h('th', { scope: 'col' }, names.name(u))))),
          h('tbody', {}, ...v.members.map((m) => h('tr', {}, h('th', { scope: 'row' }, m.address), ...cols.map((u) => cell(m, u))))),
        ),
      ),
    );
    // Members that answered but list other members than the page's member does: two views of the cluster.
    const disagree = v.members.filter((m) => m.memberList.length !== listed.size || m.memberList.some((u) => !listed.has(u)));
    fill(
      banner,
      disagree.length === 0
        ? null
        : h(
            'div',
            { class: 'banner bad', role: 'alert', 'data-split-brain': '' },
            h('strong', {}, 'Members disagree on the member list (a split brain?). '),
            disagree.map((m) => `${m.address} lists ${m.memberList.map((u) => names.name(u)).join(', ')}`).join('; '),
            `; this member lists ${[...listed].map((u) => names.name(u)).join(', ')}.`,
          ),
    );
  };

  return {
    root,
    panels: [summary, members, matrix],
    refresh: async () => {
      await guarded([summary, members, matrix], async () => draw(await clusterView()));
    },
  };
}
