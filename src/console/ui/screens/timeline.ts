// Screen 8, Timeline: what happened to the cluster, newest first, merged from every member's ring;
// filtered by kind; each entry says where it happened and who asked.
import { fill, h } from '../dom.js';
import { dateTime } from '../format.js';
import { answeredNote, Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { clusterView, eventsView, MemberNames, type EventsView } from '../views.js';

/** The kinds of docs/rest.md (src/util/timeline.ts EVENT_KINDS: the page is compiled on its own and imports nothing from the member). */
const EVENT_KINDS = [
  'member-joined',
  'member-left',
  'member-suspected',
  'master-changed',
  'state-changed',
  'migration-started',
  'migration-finished',
  'split-brain-merge',
  'wan-sync',
  'wan-consistency-check',
  'recovery',
  'cp-leader-changed',
  'management-call',
  'login',
  'logout',
  'login-refused',
] as const;

export function timelineScreen(_ctx: Ctx): Screen {
  const panel = new Panel('Events');
  const names = new MemberNames();
  const hidden = new Set<string>();
  const boxes = h(
    'fieldset',
    { class: 'pins' },
    h('legend', {}, 'Kinds shown'),
    ...EVENT_KINDS.map((k) => {
      const box = h('input', { type: 'checkbox', id: `k-${k}`, checked: true });
      box.addEventListener('change', () => {
        if (box.checked) hidden.delete(k);
        else hidden.add(k);
        if (last !== null) draw(last);
      });
      return h('span', { class: 'pin' }, box, h('label', { for: `k-${k}` }, k));
    }),
  );
  let last: EventsView | null = null;
  const draw = (v: EventsView): void => {
    last = v;
    const shown = v.events.filter((e) => !hidden.has(e.kind));
    fill(
      panel.body,
      answeredNote(v, (u) => names.name(u)),
      shown.length === 0
        ? h('p', { class: 'hint' }, 'Nothing recorded yet.')
        : h(
            'ol',
            { class: 'timeline' },
            ...shown.map((e) =>
              h(
                'li',
                { 'data-event': e.id, 'data-kind': e.kind },
                h('time', { datetime: new Date(e.timeMs).toISOString() }, dateTime(e.timeMs)),
                h('span', { class: `kind k-${e.kind}` }, e.kind),
                h('span', { class: 'where' }, names.name(e.member)),
                h('span', { class: 'message' }, e.message),
                e.actor === null ? null : h('span', { class: 'actor' }, `by ${e.actor}`),
              ),
            ),
          ),
    );
  };
  const root = h('div', { 'data-screen': 'timeline' }, h('h1', {}, 'Timeline'), boxes, panel.el);
  return {
    root,
    panels: [panel],
    refresh: async () => {
      await guarded(panel, async () => {
        const [v, c] = await Promise.all([eventsView(500), clusterView()]);
        names.learn(c.members);
        draw(v);
      });
    },
  };
}
