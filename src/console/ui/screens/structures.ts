// Screen 4, Maps and queues: every structure with its figures, paged by name (the member never
// scans a map to draw this); a key look-up with the key's partition and replicas; put, delete, and
// clear behind a typed confirmation.
import { CallError, getJson, messageOf, request } from '../api.js';
import { actionButton } from '../dialog.js';
import { fill, h } from '../dom.js';
import { bytes, count, rate } from '../format.js';
import { answeredNote, Panel } from '../panel.js';
import { guarded, type Ctx, type Screen } from '../screen.js';
import { MemberNames, clusterView, type MapRow, type QueueRow, type StructuresView } from '../views.js';

type MapKey = keyof MapRow;
type QueueKey = keyof QueueRow;

const mapPath = (map: string, key?: string): string => `/grid/rest/maps/${encodeURIComponent(map)}${key === undefined ? '' : `/${encodeURIComponent(key)}`}`;

export function structuresScreen(ctx: Ctx): Screen {
  const maps = new Panel('Maps');
  const queues = new Panel('Queues');
  const lookup = new Panel('Key look-up');
  const names = new MemberNames();
  const pageSizes = ['25', '100', '500'];
  let prefix = '';
  let limit = 25;
  const cursors: string[] = [''];
  let mapSort: { key: MapKey; desc: boolean } = { key: 'name', desc: false };
  let queueSort: { key: QueueKey; desc: boolean } = { key: 'name', desc: false };
  let last: StructuresView | null = null;

  const filter = h('input', { id: 's-prefix', type: 'search', placeholder: 'name prefix', autocomplete: 'off' });
  const size = h('select', { id: 's-limit' }, ...pageSizes.map((n) => h('option', { value: n }, n)));
  const prev = h('button', { type: 'button', disabled: true }, 'Previous page');
  const next = h('button', { type: 'button', disabled: true }, 'Next page');
  const controls = h('form', { class: 'controls', role: 'search' }, h('label', { for: 's-prefix' }, 'Filter by name prefix'), filter, h('label', { for: 's-limit' }, 'Per page'), size, prev, next);
  controls.addEventListener('submit', (e) => e.preventDefault());
  filter.addEventListener('input', () => {
    prefix = filter.value;
    cursors.splice(0, cursors.length, '');
    ctx.refreshNow();
  });
  size.addEventListener('change', () => {
    limit = Number(size.value);
    cursors.splice(0, cursors.length, '');
    ctx.refreshNow();
  });
  prev.addEventListener('click', () => {
    if (cursors.length > 1) cursors.pop();
    ctx.refreshNow();
  });
  next.addEventListener('click', () => {
    const lastMap = last?.maps[last.maps.length - 1]?.name;
    const lastQueue = last?.queues[last.queues.length - 1]?.name;
    const after = [lastMap, lastQueue].filter((x): x is string => x !== undefined).sort()[0];
    if (after !== undefined) cursors.push(after);
    ctx.refreshNow();
  });

  const sortButton = <K extends string>(label: string, key: K, current: { key: K; desc: boolean }, set: (s: { key: K; desc: boolean }) => void): HTMLTableCellElement =>
    h(
      'th',
      { scope: 'col', 'aria-sort': current.key === key ? (current.desc ? 'descending' : 'ascending') : 'none' },
      h('button', { type: 'button', class: 'sort', onclick: () => (set({ key, desc: current.key === key ? !current.desc : key !== 'name' }), last !== null && draw(last)) }, label),
    );
  const sorted = <T, K extends keyof T>(rows: readonly T[], by: { key: K; desc: boolean }): T[] =>
    [...rows].sort((a, b) => {
      const x = a[by.key];
      const y = b[by.key];
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return by.desc ? -c : c;
    });

  const draw = (v: StructuresView): void => {
    last = v;
    prev.disabled = cursors.length <= 1;
    next.disabled = !v.more.maps && !v.more.queues;
    const mapCols: [string, MapKey][] = [['Name', 'name'], ['Entries', 'entries'], ['Backup entries', 'backupEntries'], ['Memory', 'bytes'], ['Gets/s', 'getsPerSecond'], ['Puts/s', 'putsPerSecond'], ['WAN', 'wan'], ['Persistence', 'persistence']];
    fill(
      maps.body,
      answeredNote(v, (u) => names.name(u)),
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'grid-table' },
          h('thead', {}, h('tr', {}, ...mapCols.map(([label, key]) => sortButton(label, key, mapSort, (s) => (mapSort = s))))),
          h(
            'tbody',
            {},
            ...sorted(v.maps, mapSort).map((m) =>
              h(
                'tr',
                { 'data-map': m.name },
                h('th', { scope: 'row' }, h('button', { type: 'button', class: 'link', onclick: () => selectMap(m.name) }, m.name)),
                h('td', { class: 'num' }, count(m.entries)),
                h('td', { class: 'num' }, count(m.backupEntries)),
                h('td', { class: 'num' }, bytes(m.bytes)),
                h('td', { class: 'num' }, rate(m.getsPerSecond)),
                h('td', { class: 'num' }, rate(m.putsPerSecond)),
                h('td', {}, m.wan ? 'yes' : 'no'),
                h('td', {}, m.persistence ? 'yes' : 'no'),
              ),
            ),
          ),
        ),
      ),
      v.maps.length === 0 ? h('p', { class: 'hint' }, prefix === '' ? 'No map holds entries yet.' : `No map name starts with “${prefix}”.`) : null,
    );
    const queueCols: [string, QueueKey][] = [['Name', 'name'], ['Size', 'size'], ['Offers/s', 'offersPerSecond'], ['Polls/s', 'pollsPerSecond']];
    fill(
      queues.body,
      h(
        'div',
        { class: 'scroll' },
        h(
          'table',
          { class: 'grid-table' },
          h('thead', {}, h('tr', {}, ...queueCols.map(([label, key]) => sortButton(label, key, queueSort, (s) => (queueSort = s))))),
          h('tbody', {}, ...sorted(v.queues, queueSort).map((q) => h('tr', { 'data-queue': q.name }, h('th', { scope: 'row' }, q.name), h('td', { class: 'num' }, count(q.size)), h('td', { class: 'num' }, rate(q.offersPerSecond)), h('td', { class: 'num' }, rate(q.pollsPerSecond))))),
        ),
      ),
      v.queues.length === 0 ? h('p', { class: 'hint' }, 'No queue holds items.') : null,
    );
  };

  // ── key look-up ──
  const mapInput = h('input', { id: 'k-map', type: 'text', autocomplete: 'off' });
  const keyInput = h('input', { id: 'k-key', type: 'text', autocomplete: 'off' });
  const found = h('div', { class: 'lookup-result', 'aria-live': 'polite' });
  const selectMap = (name: string): void => {
    mapInput.value = name;
    keyInput.focus();
  };
  const look = async (): Promise<void> => {
    const map = mapInput.value;
    const key = keyInput.value;
    if (map === '' || key === '') {
      fill(found, h('p', { class: 'error' }, 'Name a map and a key.'));
      return;
    }
    try {
      const [a, where] = await Promise.all([request('GET', mapPath(map, key)), getJson<{ partition: number; replicas: (string | null)[] }>(`/grid/rest/partitions/of/${encodeURIComponent(key)}`)]);
      if (a.status !== 200 && a.status !== 204) throw new CallError(a.status, messageOf(a));
      const [owner, ...backups] = where.replicas;
      fill(
        found,
        h(
          'dl',
          { class: 'facts', 'data-lookup': a.status === 200 ? 'found' : 'absent' },
          h('dt', {}, 'Value'),
          h('dd', {}, a.status === 204 ? h('em', {}, 'no entry') : h('pre', { class: 'value' }, a.text.length > 4096 ? `${a.text.slice(0, 4096)}… (${count(a.text.length)} characters)` : a.text)),
          h('dt', {}, 'Content type'),
          h('dd', {}, a.headers.get('content-type') ?? 'none stored'),
          h('dt', {}, 'Partition'),
          h('dd', {}, String(where.partition)),
          h('dt', {}, 'Owner'),
          h('dd', {}, names.name(owner ?? null)),
          h('dt', {}, 'Backups'),
          h('dd', {}, backups.filter((u) => u !== null).map((u) => names.name(u)).join(', ') || 'none'),
        ),
      );
    } catch (e) {
      fill(found, h('p', { class: 'error' }, e instanceof Error ? e.message : String(e)));
    }
  };
  const lookForm = h(
    'form',
    { class: 'controls' },
    h('label', { for: 'k-map' }, 'Map'),
    mapInput,
    h('label', { for: 'k-key' }, 'Key'),
    keyInput,
    h('button', { type: 'submit', 'data-action': 'map-get' }, 'Look up'),
  );
  lookForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void look();
  });
  const dataCall = async (method: string, path: string, body?: string, contentType?: string): Promise<void> => {
    const a = await request(method, path, body, contentType);
    if (a.status !== 200) throw new CallError(a.status, `${a.status}: ${messageOf(a)}`);
  };
  const actions = h(
    'div',
    { class: 'buttons' },
    actionButton('Put…', {
      action: 'map-put',
      title: 'Put an entry',
      role: 'operator',
      fields: () => [
        { name: 'map', label: 'Map', value: mapInput.value },
        { name: 'key', label: 'Key', value: keyInput.value },
        { name: 'value', label: 'Value', kind: 'textarea' },
        { name: 'contentType', label: 'Content type', value: 'text/plain' },
      ],
      call: (v) => ({ method: 'POST', path: mapPath(v.map ?? '', v.key ?? ''), params: null, body: { text: v.value ?? '', contentType: v.contentType ?? 'text/plain' }, admin: null }),
      run: async (v) => {
        if ((v.map ?? '') === '' || (v.key ?? '') === '') throw new Error('name a map and a key');
        await dataCall('POST', mapPath(v.map ?? '', v.key ?? ''), v.value ?? '', v.contentType === '' ? 'text/plain' : v.contentType);
        return `stored ${v.key} in ${v.map}`;
      },
      after: () => ctx.refreshNow(),
    }),
    actionButton('Delete…', {
      action: 'map-delete',
      title: 'Delete an entry',
      role: 'operator',
      fields: () => [
        { name: 'map', label: 'Map', value: mapInput.value },
        { name: 'key', label: 'Key', value: keyInput.value },
      ],
      call: (v) => ({ method: 'DELETE', path: mapPath(v.map ?? '', v.key ?? ''), params: null, admin: null }),
      run: async (v) => {
        if ((v.map ?? '') === '' || (v.key ?? '') === '') throw new Error('name a map and a key');
        await dataCall('DELETE', mapPath(v.map ?? '', v.key ?? ''));
        return `deleted ${v.key} from ${v.map}`;
      },
      after: () => ctx.refreshNow(),
    }),
  );
  const clearButton = (): HTMLButtonElement =>
    actionButton('Clear a map…', {
      action: 'map-clear',
      title: 'Clear a map',
      description: 'Removes every entry of the map on every member. This cannot be undone.',
      role: 'operator',
      fields: () => [{ name: 'map', label: 'Map', value: mapInput.value }],
      confirm: (v) => v.map ?? '',
      call: (v) => ({ method: 'DELETE', path: mapPath(v.map ?? ''), params: null, admin: null }),
      run: async (v) => {
        if ((v.map ?? '') === '') throw new Error('name the map');
        await dataCall('DELETE', mapPath(v.map ?? ''));
        return `cleared ${v.map}`;
      },
      after: () => ctx.refreshNow(),
    });
  actions.append(clearButton());
  fill(lookup.body, lookForm, found, actions);

  const root = h('div', { 'data-screen': 'structures' }, h('h1', {}, 'Maps and queues'), controls, maps.el, queues.el, lookup.el);
  return {
    root,
    panels: [maps, queues],
    refresh: async () => {
      await guarded([maps, queues], async () => {
        const q = new URLSearchParams({ limit: String(limit) });
        if (prefix !== '') q.set('prefix', prefix);
        const after = cursors[cursors.length - 1] ?? '';
        if (after !== '') q.set('after', after);
        const [v, c] = await Promise.all([getJson<StructuresView>(`/grid/rest/structures?${q.toString()}`), clusterView()]);
        names.learn(c.members);
        draw(v);
      });
    },
  };
}
