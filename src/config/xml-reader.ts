// A reader over one XML element of the configuration. Constructing it checks the element's shape
// against what the schema allows (unknown attributes and elements with a "did you mean" hint,
// duplicated singletons, stray text), so the schema code below it only reads values. Values are
// read with `${NAME}` placeholders replaced, and typed readers turn a bad value into a ConfigError
// that names file:line:column, the element and what was expected.
import { ConfigError } from './config-error.js';
import { suggest } from './did-you-mean.js';
import { expectedGot, type Parsed } from './values.js';
import type { XmlAttribute, XmlElement, XmlPosition } from './xml.js';

export interface XmlContext {
  /** Path of the file, for messages. */
  readonly file: string;
  /** Replaces `${NAME}` in a value read at `where`. */
  substitute(raw: string, where: XmlPosition): string;
}

export interface ElementShape {
  readonly attrs?: readonly string[];
  /** Children that may appear at most once. */
  readonly one?: readonly string[];
  /** Children that may repeat. */
  readonly many?: readonly string[];
  /** Whether the element holds a text value. */
  readonly text?: boolean;
}

export class ElementReader {
  readonly name: string;

  constructor(
    readonly element: XmlElement,
    readonly ctx: XmlContext,
    shape: ElementShape,
    /** The parent's name, to say `<map> element <backup-count>` in messages. */
    readonly parentName: string | null,
  ) {
    this.name = element.name;
    checkShape(element, ctx, shape);
  }

  /** `<parent> element <name>` (or `<name>` for the root). */
  get label(): string {
    return this.parentName === null ? `<${this.name}>` : `<${this.parentName}> element <${this.name}>`;
  }

  fail(at: XmlPosition, what: string): never {
    throw this.error(at, what);
  }

  /** For `throw reader.error(...)` where control-flow narrowing needs a visible throw. */
  error(at: XmlPosition, what: string): ConfigError {
    return new ConfigError(`${this.ctx.file}:${at.line}:${at.column}`, what);
  }

  where(at: XmlPosition = this.element): string {
    return `${this.ctx.file}:${at.line}:${at.column}`;
  }

  private attribute(name: string): XmlAttribute | undefined {
    return this.element.attributes.find((a) => a.name === name);
  }

  /** An attribute's value with placeholders replaced, or undefined when absent. */
  attr(name: string): string | undefined {
    const a = this.attribute(name);
    return a === undefined ? undefined : this.ctx.substitute(a.value, a);
  }

  requiredAttr(name: string): string {
    const value = this.attr(name);
    if (value === undefined) this.fail(this.element, `<${this.name}> needs attribute ${name}`);
    return value;
  }

  requiredTypedAttr<T>(name: string, parse: (raw: string) => Parsed<T>): T {
    if (this.attribute(name) === undefined) this.fail(this.element, `<${this.name}> needs attribute ${name}`);
    return this.typedAttr<T | undefined>(name, parse, undefined) as T;
  }

  /** Parses an attribute if present, else returns `fallback`. */
  typedAttr<T>(name: string, parse: (raw: string) => Parsed<T>, fallback: T): T {
    const a = this.attribute(name);
    if (a === undefined) return fallback;
    const raw = this.ctx.substitute(a.value, a);
    const parsed = parse(raw);
    if (!parsed.ok) this.fail(a, `<${this.name}> attribute ${name}: ${expectedGot(parsed.expected, raw)}`);
    return parsed.value;
  }

  /** The element's text, trimmed, with placeholders replaced. */
  text(): string {
    let raw = '';
    for (const child of this.element.children) if (child.kind === 'text') raw += child.value;
    return this.ctx.substitute(raw, this.element).trim();
  }

  /** The parsed value, or a ConfigError about `raw` at this element. */
  must<T>(parsed: Parsed<T>, raw: string): T {
    if (!parsed.ok) this.fail(this.element, `${this.label}: ${expectedGot(parsed.expected, raw)}`);
    return parsed.value;
  }

  /** Parses the element's own text. */
  typedText<T>(parse: (raw: string) => Parsed<T>): T {
    const raw = this.text();
    const parsed = parse(raw);
    if (!parsed.ok) this.fail(this.element, `${this.label}: ${expectedGot(parsed.expected, raw)}`);
    return parsed.value;
  }

  /** The single child element `name`, read with `shape`, or undefined when absent. */
  child(name: string, shape: ElementShape): ElementReader | undefined {
    const el = this.element.children.find((c): c is XmlElement => c.kind === 'element' && c.name === name);
    return el === undefined ? undefined : new ElementReader(el, this.ctx, shape, this.name);
  }

  children(name: string, shape: ElementShape): ElementReader[] {
    return this.element.children
      .filter((c): c is XmlElement => c.kind === 'element' && c.name === name)
      .map((el) => new ElementReader(el, this.ctx, shape, this.name));
  }

  /** Parses the text of an optional leaf child `name`, else returns `fallback`. */
  leaf<T>(name: string, parse: (raw: string) => Parsed<T>, fallback: T): T {
    const c = this.child(name, { text: true });
    return c === undefined ? fallback : c.typedText(parse);
  }
}

function checkShape(el: XmlElement, ctx: XmlContext, shape: ElementShape): void {
  const attrs = shape.attrs ?? [];
  for (const a of el.attributes) {
    if (attrs.includes(a.name)) continue;
    const hint = suggest(a.name, attrs);
    const tail = hint === null ? (attrs.length === 0 ? ' (it takes no attributes)' : '') : ` (did you mean ${hint}?)`;
    throw new ConfigError(`${ctx.file}:${a.line}:${a.column}`, `<${el.name}>: unknown attribute ${a.name}${tail}`);
  }
  const one = shape.one ?? [];
  const many = shape.many ?? [];
  const seen = new Map<string, XmlPosition>();
  for (const c of el.children) {
    if (c.kind === 'text') {
      if (!shape.text && !c.cdata && c.value.trim() !== '') {
        throw new ConfigError(`${ctx.file}:${c.line}:${c.column}`, `<${el.name}>: unexpected text ${JSON.stringify(c.value.trim().slice(0, 40))}`);
      }
      if (!shape.text && c.cdata) throw new ConfigError(`${ctx.file}:${c.line}:${c.column}`, `<${el.name}>: unexpected CDATA text`);
      continue;
    }
    if (many.includes(c.name)) continue;
    if (one.includes(c.name)) {
      const first = seen.get(c.name);
      if (first !== undefined) {
        throw new ConfigError(`${ctx.file}:${c.line}:${c.column}`, `<${el.name}>: element <${c.name}> is given twice (first at ${first.line}:${first.column})`);
      }
      seen.set(c.name, c);
      continue;
    }
    const allowed = [...one, ...many];
    const hint = suggest(c.name, allowed);
    const tail = hint === null ? (allowed.length === 0 ? ' (it takes no child elements)' : '') : ` (did you mean <${hint}>?)`;
    throw new ConfigError(`${ctx.file}:${c.line}:${c.column}`, `<${el.name}>: unknown element <${c.name}>${tail}`);
  }
}
