// Screen 5, WAN: every publisher on every member (state, queues, lag, events sent and dropped);
// pause, resume, stop and clear (on the member this page talks to, as the REST calls act), a sync
// of one map or all maps and a consistency check (coordinated for the whole cluster), and the
// progress of each by its UUID.
import { getJson } from '../api.js';
import { actionButton, type ActionSpec } from '../dialog.js';
import { fill, h } from '../dom.js';
import { count, duration } from '../format.js';
import { answeredNote, Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { clusterView, management, MemberNames, type ClusterView } from '../views.js';

interface Started {
  readonly uuid: string;
  readonly what: string;
  readonly check: boolean;
  line: string;
}

export function wanScreen(ctx: Ctx): Screen {
  const publishers = new Panel('Publishers');
  const runs = new Panel('Syncs and checks started here');
  const names = new MemberNames();
  const started: Started[] = [];
  const root = h('div', { 'data-screen': 'wan' }, h('h1', {}, 'WAN replication'), publishers.el, runs.el);

  const onMember = (action: string, rest: string, label: string, replication: string, publisher: string): ActionSpec => ({
    action,
    title: `${label} ${replication}/${publisher} on ${ctx.session.member}`,
    description: `Acts on the member this page talks to (${ctx.session.member}), as the REST call does.`,
    role: 'operator',
    call: () => ({ method: 'POST', path: `/grid/rest/wan/${rest}`, params: [replication, publisher], admin: null }),
    run: async () => {
      await management(`/grid/rest/wan/${rest}`, [replication, publisher]);
      return `${label.toLowerCase()}: done on ${ctx.session.member}`;
    },
    after: () => ctx.refreshNow(),
  });
  const syncSpec = (replication: string, publisher: string, check: boolean): ActionSpec => ({
    action: check ? 'wan-check' : 'wan-sync',
    title: check ? `Consistency check of a map through ${replication}/${publisher}` : `Sync through ${replication}/${publisher}`,
    role: 'operator',
    fields: [{ name: 'map', label: check ? 'Map' : 'Map (empty: all maps)', value: '' }],
    call: (v) => {
      const map = v.map ?? '';
      if (check) return { method: 'POST', path: '/grid/rest/wan/consistencyCheck/map', params: [replication, publisher, map], admin: null };
      return map === '' ? { method: 'POST', path: '/grid/rest/wan/sync/allmaps', params: [replication, publisher], admin: null } : { method: 'POST', path: '/grid/rest/wan/sync/map', params: [replication, publisher, map], admin: null };
    },
    run: async (v) => {
      const map = v.map ?? '';
      const path = check ? '/grid/rest/wan/consistencyCheck/map' : map === '' ? '/grid/rest/wan/sync/allmaps' : '/grid/rest/wan/sync/map';
      const a = await management(path, map === '' && !check ? [replication, publisher] : [replication, publisher, map]);
      const uuid = typeof a.uuid === 'string' ? a.uuid : '';
      started.unshift({ uuid, what: `${check ? 'check' : 'sync'} of ${map === '' ? 'all maps' : map} through ${replication}/${publisher}`, check, line: 'started' });
      return `${check ? 'consistency check' : 'sync'} started: ${uuid}`;
    },
    after: () => ctx.refreshNow(),
  });

  const draw = (v: ClusterView): void => {
    names.learn(v.members);
    const rows = v.members.flatMap((m) => m.wan.map((w) => ({ m, w })));
    const schemes = [...new Map(rows.map(({ w }) => [`${w.replication}\u0000${w.publisher}`, w])).values()];
    fill(
      publishers.body,
      answeredNote(v, (u) => names.name(u)),
      rows.length === 0
        ? h('p', { class: 'hint' }, 'No member has a WAN publisher.')
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              { class: 'grid-table' },
              h('thead', {}, h('tr', {}, ...['Member', 'Replication', 'Publisher', 'State', 'Queued', 'Backup queued', 'Lag', 'Sent', 'Acked', 'Dropped', 'Syncs'].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                ...rows.map(({ m, w }) =>
                  h(
                    'tr',
                    { 'data-publisher': `${w.replication}/${w.publisher}`, 'data-uuid': m.uuid, 'data-state': w.state },
                    h('th', { scope: 'row' }, m.address),
                    h('td', {}, w.replication),
                    h('td', {}, w.publisher),
                    h('td', {}, w.state),
                    h('td', { class: 'num' }, count(w.queued)),
                    h('td', { class: 'num' }, count(w.backupQueued)),
                    h('td', { class: 'num' }, duration(w.lagMs)),
                    h('td', { class: 'num' }, count(w.sent)),
                    h('td', { class: 'num' }, count(w.acked)),
                    h('td', { class: 'num' }, count(w.dropped)),
                    h('td', { class: 'num' }, count(w.syncsRunning)),
                  ),
                ),
              ),
            ),
          ),
      ...schemes.map((w) =>
        h(
          'div',
          { class: 'buttons', role: 'group', 'aria-label': `${w.replication}/${w.publisher}` },
          h('span', { class: 'group-label' }, `${w.replication}/${w.publisher}:`),
          actionButton('Pause', onMember('wan-pause', 'pausePublisher', 'Pause', w.replication, w.publisher)),
          actionButton('Resume', onMember('wan-resume', 'resumePublisher', 'Resume', w.replication, w.publisher)),
          actionButton('Stop', onMember('wan-stop', 'stopPublisher', 'Stop', w.replication, w.publisher)),
          actionButton('Clear queues', onMember('wan-clear', 'clearWanQueues', 'Clear the queues of', w.replication, w.publisher)),
          actionButton('Sync…', syncSpec(w.replication, w.publisher, false)),
          actionButton('Consistency check…', syncSpec(w.replication, w.publisher, true)),
        ),
      ),
    );
  };

  const drawRuns = async (): Promise<void> => {
    for (const s of started.slice(0, 10)) {
      if (s.uuid === '') continue;
      try {
        const p = (await getJson<{ result: Record<string, unknown> }>(s.check ? `/grid/rest/wan/consistencyCheck/${s.uuid}` : `/grid/rest/wan/sync/progress/${s.uuid}`)).result;
        s.line = s.check
          ? `${String(p.stage)}: ${String(p.checkedPartitions)} partitions checked, ${String(p.diffPartitions)} differ, ${String(p.entriesToSync)} entries to sync`
          : `${String(p.stage)}: ${String(p.progress)} %`;
      } catch (e) {
        s.line = e instanceof Error ? e.message : String(e);
      }
    }
    fill(runs.body, started.length === 0 ? h('p', { class: 'hint' }, 'None yet: start one with Sync or Consistency check.') : h('ul', { class: 'runs' }, ...started.slice(0, 10).map((s) => h('li', { 'data-run': s.uuid }, h('code', {}, s.uuid), ` ${s.what}: ${s.line}`))));
  };

  return {
    root,
    panels: [publishers, runs],
    refresh: async () => {
      await guarded(publishers, async () => draw(await clusterView()));
      await guarded(runs, drawRuns);
    },
  };
}
