// Screen 6, Persistence: each member's recovery state and log; backups (start, interrupt); force
// start and partial start of a waiting recovery behind a typed confirmation.
import { actionButton, type ActionSpec } from '../dialog.js';
import { fill, h } from '../dom.js';
import { bytes, count } from '../format.js';
import { answeredNote, Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { clusterView, management, MemberNames, type ClusterView } from '../views.js';

const PATH = '/grid/rest/management/cluster';

export function persistenceScreen(ctx: Ctx): Screen {
  const members = new Panel('Members');
  const actions = new Panel('Actions');
  const names = new MemberNames();
  const root = h('div', { 'data-screen': 'persistence' }, h('h1', {}, 'Persistence'), members.el, actions.el);

  const spec = (action: string, rest: string, title: string, description: string, confirm: boolean): ActionSpec => ({
    action,
    title,
    description,
    role: 'admin',
    ...(confirm ? { confirm: ctx.session.clusterName } : {}),
    call: () => ({ method: 'POST', path: `${PATH}/${rest}`, params: [], admin: null }),
    run: async () => {
      const a = await management(`${PATH}/${rest}`, []);
      return typeof a.message === 'string' ? a.message : `${title}: ${String(a.status)}`;
    },
    after: () => ctx.refreshNow(),
  });
  fill(
    actions.body,
    h(
      'div',
      { class: 'buttons' },
      actionButton('Back up…', spec('backup', 'backup', 'Back up every member', 'Every member copies its store under backup-dir; answers once every copy is complete.', false)),
      actionButton('Interrupt backup…', spec('backup-interrupt', 'backupInterrupt', 'Interrupt the backup', 'Every member stops the backup it runs and removes its partial copy.', false)),
      actionButton('Force start…', spec('force-start', 'forceStart', 'Force start', 'While a recovery waits: every member wipes its store and starts over with a new UUID. The persisted data is lost.', true)),
      actionButton('Partial start…', spec('partial-start', 'partialStart', 'Partial start', 'While a recovery waits (PARTIAL policies): start with the members that are back; the others’ data is lost.', true)),
    ),
  );
  const draw = (v: ClusterView): void => {
    names.learn(v.members);
    fill(
      members.body,
      answeredNote(v, (u) => names.name(u)),
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'grid-table' },
          h('thead', {}, h('tr', {}, ...['Member', 'State', 'Log state', 'Log', 'Segments', 'Records written', 'Write failures'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            {},
            ...v.members.map((m) =>
              h(
                'tr',
                { 'data-uuid': m.uuid },
                h('th', { scope: 'row' }, m.address),
                h('td', {}, m.state),
                h('td', {}, m.persistence.recovering ? 'recovering from its log' : m.persistence.logSegments > 0 ? 'writing' : 'no log (persistence off)'),
                h('td', { class: 'num' }, bytes(m.persistence.logBytes)),
                h('td', { class: 'num' }, count(m.persistence.logSegments)),
                h('td', { class: 'num' }, count(m.persistence.recordsWritten)),
                h('td', { class: m.persistence.writeFailures > 0 ? 'num bad' : 'num' }, count(m.persistence.writeFailures)),
              ),
            ),
          ),
        ),
      ),
    );
  };
  return {
    root,
    panels: [members],
    refresh: async () => {
      await guarded(members, async () => draw(await clusterView()));
    },
  };
}
