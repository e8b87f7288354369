// The dialog every action opens (spec/console.md "Stable hooks"): labelled fields, the same call as
// curl and as grid-admin (ready to copy), a typed confirmation for destructive actions, OK and
// Cancel. The page never acts without it; the member decides whether the session may (403).
import { adminFor, curlFor, currentSession } from './api.js';
import { fill, h } from './dom.js';

export interface Field {
  readonly name: string;
  readonly label: string;
  readonly kind?: 'text' | 'select' | 'textarea';
  readonly options?: readonly string[];
  readonly value?: string;
}

export type Values = Readonly<Record<string, string>>;

export interface ActionSpec {
  /** data-action of the button and the dialog. */
  readonly action: string;
  readonly title: string;
  readonly description?: string;
  /** The dialog's fields, or a function giving them when it opens (prefilled from the page). */
  readonly fields?: readonly Field[] | (() => readonly Field[]);
  /** The name to type (destructive actions): a member, a map, the cluster; or the field values' choice of it. */
  readonly confirm?: string | ((v: Values) => string);
  /** The REST call for these values: method, path, management parameters or a raw body; grid-admin arguments or null. */
  readonly call: (v: Values) => { readonly method: string; readonly path: string; readonly params: readonly string[] | null; readonly body?: { readonly text: string; readonly contentType: string }; readonly admin: readonly string[] | null };
  /** Runs it; resolves with the line to show. */
  readonly run: (v: Values) => Promise<string>;
  /** The least role that may run it (the member enforces it; the page only says so). */
  readonly role: 'operator' | 'admin';
  readonly after?: () => void;
}

const RANK = { 'read-only': 0, operator: 1, admin: 2 } as const;

/** Whether the session's role allows the action (the member checks again). */
export function allowed(role: ActionSpec['role']): boolean {
  const s = currentSession();
  return s === null || RANK[s.role] >= RANK[role];
}

/** The button that opens an action's dialog. */
export function actionButton(label: string, spec: ActionSpec, attrs: Readonly<Record<string, string>> = {}): HTMLButtonElement {
  const permitted = allowed(spec.role);
  return h(
    'button',
    {
      type: 'button',
      class: spec.confirm === undefined ? 'action' : 'action danger',
      'data-action': spec.action,
      title: permitted ? spec.title : `${spec.title} (needs the ${spec.role} role)`,
      'aria-disabled': permitted ? null : 'true',
      onclick: () => openDialog(spec),
      ...attrs,
    },
    label,
  );
}

let counter = 0;

export function openDialog(spec: ActionSpec): HTMLDialogElement {
  const id = `d${++counter}`;
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>();
  const specFields = typeof spec.fields === 'function' ? spec.fields() : (spec.fields ?? []);
  const fields = specFields.map((f) => {
    const fid = `${id}-${f.name}`;
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    if (f.kind === 'select') {
      input = h('select', { id: fid, name: f.name }, ...(f.options ?? []).map((o) => h('option', { value: o, selected: o === f.value }, o)));
    } else if (f.kind === 'textarea') {
      input = h('textarea', { id: fid, name: f.name, rows: 3 });
      input.value = f.value ?? '';
    } else {
      input = h('input', { id: fid, name: f.name, type: 'text', autocomplete: 'off', value: f.value ?? '' });
    }
    inputs.set(f.name, input);
    return h('div', { class: 'field' }, h('label', { for: fid }, f.label), input);
  });
  const values = (): Values => Object.fromEntries([...inputs].map(([k, i]) => [k, i.value]));
  const curl = h('pre', { 'data-curl': '', class: 'command', tabindex: 0, 'aria-label': 'the same call with curl' });
  const admin = h('pre', { 'data-admin': '', class: 'command', tabindex: 0, 'aria-label': 'the same call with grid-admin' });
  const result = h('p', { class: 'result', role: 'status' });
  const confirmInput = spec.confirm === undefined ? null : h('input', { id: `${id}-confirm`, type: 'text', 'data-confirm': '', autocomplete: 'off', spellcheck: 'false' });
  const confirmLabel = h('label', { for: `${id}-confirm` });
  const expected = (): string => (typeof spec.confirm === 'function' ? spec.confirm(values()) : (spec.confirm ?? ''));
  const ok = h('button', { type: 'submit', 'data-confirm-ok': '', class: spec.confirm === undefined ? 'primary' : 'primary danger' }, 'OK');
  const update = (): void => {
    try {
      const c = spec.call(values());
      fill(curl, curlFor(c.method, c.path, c.params, c.body));
      fill(admin, adminFor(c.admin) ?? 'grid-admin has no command for this call; use curl');
    } catch (e) {
      fill(curl, e instanceof Error ? e.message : String(e));
    }
    if (confirmInput !== null) fill(confirmLabel, 'Type ', h('strong', {}, expected() === '' ? '…' : expected()), ' to confirm');
    ok.disabled = confirmInput !== null && (expected() === '' || confirmInput.value !== expected());
  };
  for (const i of inputs.values()) i.addEventListener('input', update);
  confirmInput?.addEventListener('input', update);
  const copy = (from: HTMLElement, what: string): HTMLButtonElement =>
    h('button', { type: 'button', class: 'copy', onclick: () => void navigator.clipboard?.writeText(from.textContent ?? '').then(() => fill(result, `${what} copied`), () => fill(result, `select the ${what} text to copy it`)) }, `Copy ${what}`);
  const form = h(
    'form',
    { method: 'dialog' },
    h('h2', { id: `${id}-title` }, spec.title),
    spec.description === undefined ? null : h('p', {}, spec.description),
    ...fields,
    h('div', { class: 'commands' }, h('h3', {}, 'curl'), curl, copy(curl, 'curl command'), h('h3', {}, 'grid-admin'), admin, copy(admin, 'grid-admin command')),
    confirmInput === null ? null : h('div', { class: 'field confirm' }, confirmLabel, confirmInput),
    result,
    h('div', { class: 'buttons' }, ok, h('button', { type: 'button', 'data-cancel': '', onclick: () => dialog.close() }, 'Cancel')),
  );
  const dialog = h('dialog', { 'data-dialog': '', 'data-action': spec.action, 'aria-labelledby': `${id}-title` }, form);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (ok.disabled) return;
    ok.disabled = true;
    fill(result, 'running…');
    spec.run(values()).then(
      (line) => {
        fill(result, h('span', { class: 'success' }, line));
        ok.disabled = false;
        spec.after?.();
      },
      (err: unknown) => {
        fill(result, h('span', { class: 'error' }, err instanceof Error ? err.message : String(err)));
        ok.disabled = false;
      },
    );
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  update();
  dialog.showModal();
  (fields.length > 0 ? (inputs.values().next().value as HTMLElement) : (confirmInput ?? ok)).focus();
  return dialog;
}
