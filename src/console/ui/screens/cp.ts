// Screen 7, CP: every CP group with its leader, term, commit index and members; the CP members;
// the sessions of each group; promote, remove, force-destroy, close session and reset (the
// destructive ones behind a typed confirmation).
import { CallError, getJson } from '../api.js';
import { actionButton, type ActionSpec } from '../dialog.js';
import { fill, h } from '../dom.js';
import { dateTime } from '../format.js';
import { Panel } from '../panel.js';
import type { Ctx, Screen } from '../screen.js';
import { management } from '../views.js';

interface CpMember {
  readonly uuid: string;
  readonly address: string;
}
interface GroupId {
  readonly name: string;
  readonly id: number;
  readonly seed: number;
}
interface GroupDetail {
  readonly id: GroupId;
  readonly status: string;
  readonly members: readonly CpMember[];
  readonly leader: CpMember | null;
  readonly term: number;
  readonly commitIndex: number;
}
interface SessionRow {
  readonly id: number;
  readonly creationTime: number;
  readonly expirationTime: number;
  readonly endpointName: string;
  readonly endpointType: string;
}

const BASE = '/grid/rest/cp-subsystem';

export function cpScreen(ctx: Ctx): Screen {
  const groups = new Panel('CP groups');
  const members = new Panel('CP members');
  const sessions = new Panel('Sessions');
  const root = h('div', { 'data-screen': 'cp' }, h('h1', {}, 'CP subsystem'), groups.el, members.el, sessions.el);

  const post = (action: string, title: string, path: string, admin: readonly string[], confirm?: string, description?: string): ActionSpec => ({
    action,
    title,
    role: 'admin',
    ...(confirm === undefined ? {} : { confirm }),
    ...(description === undefined ? {} : { description }),
    call: () => ({ method: 'POST', path, params: [], admin: ['cp', ...admin] }),
    run: async () => {
      const a = await management(path, []);
      return typeof a.message === 'string' ? a.message : `done: ${JSON.stringify(a)}`;
    },
    after: () => ctx.refreshNow(),
  });

  const refresh = async (): Promise<void> => {
    let list: GroupId[];
    try {
      list = await getJson<GroupId[]>(`${BASE}/groups`);
    } catch (e) {
      const message = e instanceof CallError && e.status === 503 ? e.message : e instanceof Error ? e.message : String(e);
      for (const p of [groups, members, sessions]) fill(p.body, h('p', { class: 'hint' }, message));
      groups.ok();
      members.ok();
      sessions.ok();
      return;
    }
    try {
      const details = await Promise.all(list.map((g) => getJson<GroupDetail>(`${BASE}/groups/${encodeURIComponent(g.name)}`)));
      fill(
        groups.body,
        h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'grid-table' },
            h('thead', {}, h('tr', {}, ...['Group', 'Id', 'Status', 'Leader', 'Term', 'Commit index', 'Members', 'Action'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              {},
              ...details.map((d) =>
                h(
                  'tr',
                  { 'data-cp-group': d.id.name },
                  h('th', { scope: 'row' }, d.id.name),
                  h('td', {}, String(d.id.id)),
                  h('td', {}, d.status),
                  h('td', {}, d.leader?.address ?? 'none'),
                  h('td', { class: 'num' }, String(d.term)),
                  h('td', { class: 'num' }, String(d.commitIndex)),
                  h('td', {}, d.members.map((m) => m.address).join(', ')),
                  h('td', {}, d.id.name === 'METADATA' ? null : actionButton('Force-destroy…', post('cp-destroy', `Force-destroy CP group ${d.id.name}`, `${BASE}/groups/${encodeURIComponent(d.id.name)}/remove`, ['remove-group', d.id.name], d.id.name, 'Its structures are gone; calls to them fail until the group is used again.'))),
                ),
              ),
            ),
          ),
        ),
        h('div', { class: 'buttons' }, actionButton('Reset the CP subsystem…', post('cp-reset', 'Reset the CP subsystem', `${BASE}/reset`, ['reset'], ctx.session.clusterName, 'Every CP group starts again, empty. Only on the master.'))),
      );
      groups.ok();
    } catch (e) {
      groups.failed(e instanceof Error ? e.message : String(e));
    }
    try {
      const ms = await getJson<CpMember[]>(`${BASE}/members`);
      fill(
        members.body,
        h('ul', { class: 'plain' }, ...ms.map((m) => h('li', { 'data-cp-member': m.uuid }, `${m.address} `, h('code', {}, m.uuid), ' ', actionButton('Remove…', post('cp-remove', `Remove CP member ${m.address}`, `${BASE}/members/${m.uuid}/remove`, ['remove-member', m.uuid], m.uuid, 'Only a CP member that is no longer in the cluster can be removed.'))))),
        h('div', { class: 'buttons' }, actionButton('Promote this member…', post('cp-promote', `Promote ${ctx.session.member} to a CP member`, `${BASE}/members`, ['promote']))),
      );
      members.ok();
    } catch (e) {
      members.failed(e instanceof Error ? e.message : String(e));
    }
    try {
      const rows = await Promise.all(list.filter((g) => g.name !== 'METADATA').map(async (g) => ({ g, s: await getJson<SessionRow[]>(`${BASE}/groups/${encodeURIComponent(g.name)}/sessions`) })));
      const all = rows.flatMap(({ g, s }) => s.map((x) => ({ g, x })));
      fill(
        sessions.body,
        all.length === 0
          ? h('p', { class: 'hint' }, 'No session is open.')
          : h(
              'table',
              { class: 'grid-table' },
              h('thead', {}, h('tr', {}, ...['Group', 'Session', 'Endpoint', 'Created', 'Expires', 'Action'].map((t) => h('th', { scope: 'col' }, t)))),
              h(
                'tbody',
                {},
                ...all.map(({ g, x }) =>
                  h(
                    'tr',
                    { 'data-cp-session': String(x.id) },
                    h('th', { scope: 'row' }, g.name),
                    h('td', {}, String(x.id)),
                    h('td', {}, `${x.endpointName} (${x.endpointType})`),
                    h('td', {}, dateTime(x.creationTime)),
                    h('td', {}, dateTime(x.expirationTime)),
                    h('td', {}, actionButton('Close…', post('cp-close-session', `Close session ${x.id} of ${g.name}`, `${BASE}/groups/${encodeURIComponent(g.name)}/sessions/${x.id}/remove`, ['close-session', g.name, String(x.id)], undefined, 'Its locks and permits go to the next waiters.'))),
                  ),
                ),
              ),
            ),
      );
      sessions.ok();
    } catch (e) {
      sessions.failed(e instanceof Error ? e.message : String(e));
    }
  };
  return { root, panels: [groups, members, sessions], refresh };
}
