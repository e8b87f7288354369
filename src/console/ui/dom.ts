// A small helper for building DOM trees without HTML strings (nothing the page shows is ever parsed
// as markup: names of maps, keys and values are text nodes).
export type Attr = string | number | boolean | null | undefined | ((e: Event) => void);
export type Child = Node | string | number | null | undefined | false;

function apply(el: Element, attrs: Readonly<Record<string, Attr>>, children: readonly Child[]): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.startsWith('on') ? k.slice(2) : k, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
}

/** An HTML element with attributes (`on…` ones are listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Readonly<Record<string, Attr>> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element, as h() builds HTML ones. */
export function s(tag: string, attrs: Readonly<Record<string, Attr>> = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  apply(el, attrs, children);
  return el;
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false).map((c) => (typeof c === 'number' ? String(c) : c)));
}
