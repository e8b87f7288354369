// The console's shell: who the page talks to, the screens (one URL each, #/<screen>), the refresh
// selector and "last updated", staleness, the theme, and the login form when security is on.
import { CallError, messageOf, onLoginNeeded, request, setSession, type Session } from './api.js';
import { fill, h } from './dom.js';
import { clock } from './format.js';
import type { Ctx, Screen } from './screen.js';
import { actionsScreen } from './screens/actions.js';
import { chartsScreen } from './screens/charts.js';
import { clusterScreen } from './screens/cluster.js';
import { cpScreen } from './screens/cp.js';
import { partitionsScreen } from './screens/partitions.js';
import { persistenceScreen } from './screens/persistence.js';
import { structuresScreen } from './screens/structures.js';
import { timelineScreen } from './screens/timeline.js';
import { wanScreen } from './screens/wan.js';

const SCREENS: readonly { readonly id: string; readonly title: string; readonly make: (ctx: Ctx) => Screen }[] = [
  { id: 'cluster', title: 'Cluster', make: clusterScreen },
  { id: 'partitions', title: 'Partitions', make: partitionsScreen },
  { id: 'charts', title: 'Charts', make: chartsScreen },
  { id: 'structures', title: 'Maps and queues', make: structuresScreen },
  { id: 'wan', title: 'WAN', make: wanScreen },
  { id: 'persistence', title: 'Persistence', make: persistenceScreen },
  { id: 'cp', title: 'CP', make: cpScreen },
  { id: 'timeline', title: 'Timeline', make: timelineScreen },
  { id: 'actions', title: 'Actions', make: actionsScreen },
];

const PERIODS: readonly [string, number][] = [
  ['2 s', 2000],
  ['5 s', 5000],
  ['10 s', 10_000],
  ['30 s', 30_000],
  ['paused', 0],
];
const PERIOD_KEY = 'grid-console-period';
const THEME_KEY = 'grid-console-theme';

function screenId(): string {
  const id = location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return SCREENS.some((x) => x.id === id) ? id : 'cluster';
}

function applyTheme(theme: string | null): void {
  if (theme === 'dark' || theme === 'light') document.documentElement.setAttribute('data-theme', theme);
  else document.documentElement.removeAttribute('data-theme');
}

function currentTheme(): 'dark' | 'light' {
  const set = document.documentElement.getAttribute('data-theme');
  if (set === 'dark' || set === 'light') return set;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

async function loadSession(): Promise<Session | 'login'> {
  const a = await request('GET', '/grid/console/session');
  if (a.status === 401) return 'login';
  if (a.status !== 200) throw new CallError(a.status, messageOf(a));
  return JSON.parse(a.text) as Session;
}

function loginForm(app: HTMLElement, problem: string | null): void {
  const user = h('input', { id: 'login-user', name: 'username', type: 'text', autocomplete: 'username', required: true });
  const pass = h('input', { id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const note = h('p', { role: 'status', class: problem === null ? '' : 'error' }, problem ?? '');
  const form = h(
    'form',
    { class: 'login', 'data-login': '' },
    h('h1', {}, 'Grid console'),
    h('p', {}, `Log in to ${location.host} with a user of the member's security realm.`),
    h('div', { class: 'field' }, h('label', { for: 'login-user' }, 'User'), user),
    h('div', { class: 'field' }, h('label', { for: 'login-password' }, 'Password'), pass),
    note,
    h('div', { class: 'buttons' }, h('button', { type: 'submit', class: 'primary' }, 'Log in')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    fill(note, 'logging in…');
    void request('POST', '/grid/console/session', JSON.stringify({ username: user.value, password: pass.value }), 'application/json').then(
      (a) => {
        if (a.status === 200) void start(app);
        else {
          note.className = 'error';
          fill(note, a.status === 429 ? `Too many failed logins: try again in ${a.headers.get('retry-after') ?? '60'} s.` : a.status === 401 ? 'Wrong user or password.' : messageOf(a));
          pass.value = '';
          pass.focus();
        }
      },
      (err: unknown) => fill(note, err instanceof Error ? err.message : String(err)),
    );
  });
  fill(app, h('main', { id: 'main' }, form));
  user.focus();
}

async function start(app: HTMLElement): Promise<void> {
  let s: Session | 'login';
  try {
    s = await loadSession();
  } catch (e) {
    fill(app, h('main', { id: 'main' }, h('h1', {}, 'Grid console'), h('p', { class: 'error', role: 'alert' }, `The member did not answer: ${e instanceof Error ? e.message : String(e)}`), h('button', { type: 'button', onclick: () => void start(app) }, 'Try again')));
    return;
  }
  if (s === 'login') {
    loginForm(app, null);
    return;
  }
  const session = s;
  setSession(session);
  onLoginNeeded(() => {
    stopShell?.();
    setSession(null);
    loginForm(app, 'The session ended: log in again.');
  });
  stopShell = shell(app, session);
}

/** A selector that finds the same control after a redraw (by its stable data-* hooks or id), or null. */
function focusSelector(el: HTMLElement): string | null {
  const attrs = ['data-partition-id', 'data-action', 'data-nav', 'id'];
  const own = attrs.filter((a) => el.hasAttribute(a)).map((a) => `[${a}="${CSS.escape(el.getAttribute(a) ?? '')}"]`).join('');
  if (own === '') return null;
  const row = el.closest('[data-uuid],[data-map],[data-publisher],[data-cp-group],[data-cp-session],[data-cp-member]');
  if (row === null) return own;
  const key = ['data-uuid', 'data-map', 'data-publisher', 'data-cp-group', 'data-cp-session', 'data-cp-member'].find((a) => row.hasAttribute(a)) as string;
  return `[${key}="${CSS.escape(row.getAttribute(key) ?? '')}"] ${own}`;
}

/** Stops the running shell's timers (before the login form replaces it). */
let stopShell: (() => void) | null = null;

function shell(app: HTMLElement, session: Session): () => void {
  const stored = Number(localStorage.getItem(PERIOD_KEY) ?? '5000');
  let period = PERIODS.some(([, p]) => p === stored) ? stored : 5000;
  const select = h('select', { id: 'refresh', 'data-refresh': '' }, ...PERIODS.map(([label, p]) => h('option', { value: p, selected: p === period }, label)));
  const updated = h('span', { class: 'updated', 'data-updated': '', 'aria-live': 'off' }, 'not updated yet');
  const themeButton = h('button', { type: 'button', class: 'theme', 'aria-pressed': String(currentTheme() === 'dark') }, 'Dark theme');
  const nav = h('nav', { 'aria-label': 'Screens' }, h('ul', {}, ...SCREENS.map((x) => h('li', {}, h('a', { href: `#/${x.id}`, 'data-nav': x.id }, x.title)))));
  const main = h('main', { id: 'main', tabindex: -1 });
  const logout = session.security
    ? h(
        'button',
        {
          type: 'button',
          'data-logout': '',
          onclick: () =>
            void request('DELETE', '/grid/console/session').then(() => {
              stop();
              setSession(null);
              loginForm(app, 'Logged out.');
            }),
        },
        `Log out ${session.user ?? ''}`,
      )
    : null;
  const header = h(
    'header',
    {},
    h('a', { class: 'skip', href: '#main', onclick: (e: Event) => (e.preventDefault(), main.focus()) }, 'Skip to the screen'),
    h('div', { class: 'brand' }, h('span', { class: 'logo', 'aria-hidden': 'true' }, '▦'), h('span', {}, 'Grid'), h('span', { class: 'cluster-name', 'data-cluster-name': '' }, session.clusterName)),
    h('p', { class: 'member', 'data-member-self': session.memberUuid }, 'Talking to ', h('strong', {}, session.member), session.security ? ` as ${session.user ?? '?'} (${session.role})` : ''),
    h('div', { class: 'controls' }, h('label', { for: 'refresh' }, 'Refresh'), select, updated, themeButton, logout),
  );
  fill(app, header, nav, main);

  const ctx: Ctx = { session, periodMs: () => period, refreshNow: () => void tick() };
  let current: Screen | null = null;
  let timer: number | null = null;
  let running = false;

  const show = (): void => {
    current?.dispose?.();
    const id = screenId();
    const def = SCREENS.find((x) => x.id === id) ?? (SCREENS[0] as (typeof SCREENS)[number]);
    current = def.make(ctx);
    document.title = `${def.title} · Grid console · ${session.clusterName}`;
    for (const a of nav.querySelectorAll('a')) {
      if (a.getAttribute('data-nav') === id) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    fill(main, current.root);
    fill(updated, 'loading…');
    void tick();
  };
  const schedule = (): void => {
    if (stopped) return;
    if (timer !== null) clearTimeout(timer);
    timer = period > 0 ? window.setTimeout(() => void tick(), period) : null;
  };
  const tick = async (): Promise<void> => {
    if (running || current === null) return;
    running = true;
    const screen = current;
    // A refresh redraws the panels: the element that had the focus is put back (keyboard users).
    const focused = document.activeElement instanceof HTMLElement && main.contains(document.activeElement) ? focusSelector(document.activeElement) : null;
    try {
      await screen.refresh();
      if (focused !== null && !main.contains(document.activeElement)) main.querySelector<HTMLElement>(focused)?.focus();
      const times = screen.panels.map((p) => p.lastUpdatedMs).filter((t) => t > 0);
      if (screen === current) fill(updated, times.length === 0 ? 'not updated yet' : `last updated ${clock(Math.min(...times))}`);
    } finally {
      running = false;
      schedule();
    }
  };
  select.addEventListener('change', () => {
    period = Number(select.value);
    localStorage.setItem(PERIOD_KEY, String(period));
    if (period === 0) {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    } else void tick();
  });
  themeButton.addEventListener('click', () => {
    const next = currentTheme() === 'dark' ? 'light' : 'dark';
    localStorage.setItem(THEME_KEY, next);
    applyTheme(next);
    themeButton.setAttribute('aria-pressed', String(next === 'dark'));
  });
  // Staleness is judged every second, whatever the period.
  const staleness = window.setInterval(() => {
    for (const p of current?.panels ?? []) p.checkStale(period);
  }, 1000);
  let stopped = false;
  function stop(): void {
    if (stopped) return;
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    clearInterval(staleness);
    window.removeEventListener('hashchange', show);
    current?.dispose?.();
    current = null;
  }
  window.addEventListener('hashchange', show);
  show();
  return stop;
}

applyTheme(localStorage.getItem(THEME_KEY));
const root = document.getElementById('app');
if (root !== null) void start(root);
