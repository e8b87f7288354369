// Screen 9, Actions: the cluster state (with the state each member holds, so a two-phase change
// shows who has it), shutdown of this member or of the cluster, the log level, the tcp-ip member
// list. Each opens its dialog with the curl and grid-admin forms.
import { getJson } from '../api.js';
import { actionButton } from '../dialog.js';
import { fill, h } from '../dom.js';
import { answeredNote, Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { clusterView, management, MemberNames, type ClusterView } from '../views.js';

const STATES = ['active', 'no_migration', 'frozen', 'passive'];
const LEVELS = ['SEVERE', 'WARNING', 'INFO', 'CONFIG', 'FINE', 'FINER', 'FINEST', 'ALL', 'OFF'];
const MGMT = '/grid/rest/management/cluster';

export function actionsScreen(ctx: Ctx): Screen {
  const state = new Panel('Cluster state');
  const shutdown = new Panel('Shutdown');
  const log = new Panel('Log level');
  const list = new Panel('Member list (tcp-ip join)');
  const names = new MemberNames();
  const root = h('div', { 'data-screen': 'actions' }, h('h1', {}, 'Actions'), state.el, shutdown.el, log.el, list.el);

  fill(
    shutdown.body,
    h('p', {}, `Shutting down this member hands its partitions off first (when the cluster state allows migrations). The page talks to ${ctx.session.member}; open the console on another member to stop that one.`),
    h(
      'div',
      { class: 'buttons' },
      actionButton('Shut down this member…', {
        action: 'shutdown-member',
        title: `Shut down ${ctx.session.member}`,
        role: 'admin',
        confirm: ctx.session.member,
        call: () => ({ method: 'POST', path: `${MGMT}/memberShutdown`, params: [], admin: ['shutdown', '--member'] }),
        run: async () => {
          const a = await management(`${MGMT}/memberShutdown`, []);
          return typeof a.message === 'string' ? a.message : 'the member is shutting down';
        },
      }),
      actionButton('Shut down the cluster…', {
        action: 'shutdown-cluster',
        title: 'Shut down the whole cluster',
        description: 'The cluster turns PASSIVE, then every member stops.',
        role: 'admin',
        confirm: ctx.session.clusterName,
        call: () => ({ method: 'POST', path: `${MGMT}/clusterShutdown`, params: [], admin: ['shutdown', '--cluster'] }),
        run: async () => {
          await management(`${MGMT}/clusterShutdown`, []);
          return 'the cluster is shutting down';
        },
      }),
    ),
  );

  const drawState = (v: ClusterView): void => {
    names.learn(v.members);
    fill(
      state.body,
      h('p', {}, 'The cluster is ', h('strong', { 'data-cluster-state': v.clusterState }, v.clusterState), '.'),
      answeredNote(v, (u) => names.name(u)),
      h('table', { class: 'grid-table' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Member'), h('th', { scope: 'col' }, 'Cluster state it holds'))), h('tbody', {}, ...v.members.map((m) => h('tr', { 'data-uuid': m.uuid }, h('th', { scope: 'row' }, m.address), h('td', {}, m.clusterState))))),
      h(
        'div',
        { class: 'buttons' },
        actionButton('Change the state…', {
          action: 'change-state',
          title: 'Change the cluster state',
          description: 'Two phases: every member takes the new state, or none does. passive refuses data writes; frozen and no_migration stop partition moves.',
          role: 'operator',
          fields: [{ name: 'state', label: 'New state', kind: 'select', options: STATES, value: v.clusterState.toLowerCase() === 'active' ? 'frozen' : 'active' }],
          call: (x) => ({ method: 'POST', path: `${MGMT}/changeState`, params: [x.state ?? ''], admin: ['change-state', x.state ?? ''] }),
          run: async (x) => {
            const a = await management(`${MGMT}/changeState`, [x.state ?? '']);
            return `cluster state: ${String(a.state)}`;
          },
          after: () => ctx.refreshNow(),
        }),
      ),
    );
  };

  const drawLog = (level: string | null): void => {
    fill(
      log.body,
      h('p', {}, `Level set at run time on ${ctx.session.member}: `, h('strong', {}, level ?? 'none (the configured level)')),
      h(
        'div',
        { class: 'buttons' },
        actionButton('Set the level…', {
          action: 'log-level',
          title: `Set the log level of ${ctx.session.member}`,
          role: 'operator',
          fields: [{ name: 'level', label: 'Level', kind: 'select', options: LEVELS, value: level ?? 'INFO' }],
          call: (x) => ({ method: 'POST', path: '/grid/rest/log-level', params: [x.level ?? ''], admin: ['log-level', x.level ?? ''] }),
          run: async (x) => {
            await management('/grid/rest/log-level', [x.level ?? '']);
            return `log level ${x.level ?? ''}`;
          },
          after: () => ctx.refreshNow(),
        }),
        actionButton('Reset the level…', {
          action: 'log-level-reset',
          title: `Reset the log level of ${ctx.session.member}`,
          role: 'operator',
          call: () => ({ method: 'POST', path: '/grid/rest/log-level/reset', params: [], admin: ['log-level', '--reset'] }),
          run: async () => {
            await management('/grid/rest/log-level/reset', []);
            return 'log level reset';
          },
          after: () => ctx.refreshNow(),
        }),
      ),
    );
  };

  const drawList = (members: readonly string[] | null, why: string | null): void => {
    fill(
      list.body,
      members === null ? h('p', { class: 'hint' }, why ?? 'tcp-ip join is off') : h('p', {}, members.length === 0 ? 'The list is empty.' : members.join(', ')),
      members === null
        ? null
        : h(
            'div',
            { class: 'buttons' },
            actionButton('Change the list…', {
              action: 'member-list',
              title: 'Change the tcp-ip member list',
              description: 'Applied on this member and sent to every other member.',
              role: 'admin',
              fields: [{ name: 'members', label: 'Members (host, host:port or host:p1-p2; comma-separated)', value: members.join(', ') }],
              call: (x) => ({ method: 'POST', path: '/grid/rest/config/tcp-ip/member-list', params: [x.members ?? ''], admin: ['member-list', (x.members ?? '').replace(/\s+/g, '')] }),
              run: async (x) => {
                await management('/grid/rest/config/tcp-ip/member-list', [x.members ?? '']);
                return 'member list changed';
              },
              after: () => ctx.refreshNow(),
            }),
          ),
    );
  };

  return {
    root,
    panels: [state, log, list],
    refresh: async () => {
      await guarded(state, async () => drawState(await clusterView()));
      await guarded(log, async () => drawLog((await getJson<{ logLevel: string | null }>('/grid/rest/log-level')).logLevel));
      try {
        const a = await getJson<{ 'member-list': string[] }>('/grid/rest/config/tcp-ip/member-list');
        drawList(a['member-list'], null);
        list.ok();
      } catch (e) {
        drawList(null, e instanceof Error ? e.message : String(e));
        list.ok();
      }
    },
  };
}
