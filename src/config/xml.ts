// The project's own XML parser, for configuration files only. It reads a small, safe subset of XML:
// an optional leading declaration, elements, attributes, text, comments, CDATA, the five predefined
// entities and numeric character references. Anything that could reach outside the document (a DTD,
// an external or unknown entity, a processing instruction) is rejected, never resolved.
//
// Invariants: the only exception that can leave parseXml is XmlParseError; every node knows its
// 1-based line and column; each input character is examined a bounded number of times (one scan, no
// backtracking regular expressions), so time grows linearly with the input, and input size and
// nesting depth are capped before they can cost anything.
import { GridError } from '../util/errors.js';

export interface XmlPosition {
  readonly line: number;
  readonly column: number;
}

export interface XmlAttribute extends XmlPosition {
  readonly name: string;
  readonly value: string;
}

export interface XmlText extends XmlPosition {
  readonly kind: 'text';
  readonly value: string;
  readonly cdata: boolean;
}

export interface XmlElement extends XmlPosition {
  readonly kind: 'element';
  readonly name: string;
  /** In document order; `xmlns` and `xmlns:*` attributes are dropped (namespaces are ignored). */
  readonly attributes: readonly XmlAttribute[];
  /** Elements and text in document order; comments are dropped. */
  readonly children: readonly XmlNode[];
}

export type XmlNode = XmlElement | XmlText;

export interface XmlLimits {
  /** Input size cap in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Deepest element nesting allowed; the root is depth 1. */
  readonly maxDepth: number;
}

export const XML_DEFAULT_LIMITS: XmlLimits = { maxBytes: 1024 * 1024, maxDepth: 64 };

/** A document that is not acceptable. `message` is `line:column: reason`. */
export class XmlParseError extends GridError {
  override name = 'XmlParseError';
  readonly line: number;
  readonly column: number;
  readonly reason: string;

  constructor(line: number, column: number, reason: string) {
    super('ERR_CONFIG_INVALID', `${line}:${column}: ${reason}`);
    this.line = line;
    this.column = column;
    this.reason = reason;
  }
}

/** Parses a whole document and returns its root element. Throws only XmlParseError. */
export function parseXml(text: string, limits: Partial<XmlLimits> = {}): XmlElement {
  const maxBytes = limits.maxBytes ?? XML_DEFAULT_LIMITS.maxBytes;
  const maxDepth = limits.maxDepth ?? XML_DEFAULT_LIMITS.maxDepth;
  if (typeof text !== 'string') throw new XmlParseError(1, 1, 'input is not text');
  if (exceedsUtf8Bytes(text, maxBytes)) throw new XmlParseError(1, 1, `input is larger than ${maxBytes} bytes`);
  // XML treats CR LF and lone CR as LF; normalizing first keeps every offset below a plain index.
  const src = (text.startsWith('\uFEFF') ? text.slice(1) : text).replace(/\r\n?/g, '\n');
  return new Parser(src, maxDepth).document();
}

function exceedsUtf8Bytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true; // UTF-8 never takes fewer bytes than UTF-16 code units
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
    if (bytes > maxBytes) return true;
  }
  return false;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

const PREDEFINED_ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };
/** Longest reference we look for a `;` in: `&#x10FFFF;` is 10 characters. */
const ENTITY_SCAN_MAX = 12;

interface OpenElement {
  readonly name: string;
  readonly line: number;
  readonly column: number;
  readonly attributes: XmlAttribute[];
  readonly children: XmlNode[];
}

class Parser {
  private pos = 0;
  /** Offsets where each line starts, for turning an offset into line:column by binary search. */
  private readonly lineStarts: number[] = [0];

  constructor(
    private readonly src: string,
    private readonly maxDepth: number,
  ) {
    for (let i = 0; i < src.length; i++) {
      const c = src.charCodeAt(i);
      if (c === 10) this.lineStarts.push(i + 1);
      else if (!isXmlChar(c, src.charCodeAt(i + 1), src.charCodeAt(i - 1))) {
        this.fail(i, `character U+${c.toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`);
      }
    }
  }

  document(): XmlElement {
    if (this.src.startsWith('<?xml') && isSpace(this.src.charCodeAt(5))) this.declaration();
    this.misc();
    if (this.pos >= this.src.length) this.fail(this.pos, 'expected the root element, found the end of the input');
    if (this.src.charCodeAt(this.pos) !== 0x3c) this.fail(this.pos, 'expected the root element, found text');
    const root = this.elementTree();
    this.misc();
    if (this.pos < this.src.length) this.fail(this.pos, 'content after the root element');
    return root;
  }

  /** `<?xml version="1.0" encoding="UTF-8"?>`, only at the very start. */
  private declaration(): void {
    this.pos += 5;
    const attrs = this.attributes('?>', 'the XML declaration').attrs;
    const names = new Set(attrs.map((a) => a.name));
    if (!names.has('version')) this.fail(0, 'the XML declaration needs a version');
    for (const a of attrs) {
      if (a.name !== 'version' && a.name !== 'encoding' && a.name !== 'standalone') {
        this.failAt(a, `unknown attribute "${a.name}" in the XML declaration`);
      }
      // The file is read as UTF-8; another declared encoding would silently change names and passwords.
      if (a.name === 'encoding' && !/^utf-?8$/i.test(a.value)) {
        this.failAt(a, `encoding "${a.value}" is not supported: configuration files are UTF-8`);
      }
    }
  }

  /** Whitespace and comments between top-level constructs; rejects DTDs and processing instructions. */
  private misc(): void {
    for (;;) {
      this.skipSpace();
      if (this.src.startsWith('<!--', this.pos)) this.comment();
      else if (this.src.startsWith('<!', this.pos) || this.src.startsWith('<?', this.pos)) this.badMarkup();
      else return;
    }
  }

  private badMarkup(): never {
    if (this.src.startsWith('<!DOCTYPE', this.pos)) this.fail(this.pos, 'DOCTYPE and DTDs are not allowed');
    if (this.src.startsWith('<?xml', this.pos) && isSpace(this.src.charCodeAt(this.pos + 5))) this.fail(this.pos, 'the XML declaration is only allowed at the very start');
    if (this.src.startsWith('<?', this.pos)) this.fail(this.pos, 'processing instructions are not allowed');
    return this.fail(this.pos, 'unexpected markup "<!"');
  }

  private comment(): void {
    const end = this.src.indexOf('-->', this.pos + 4);
    if (end < 0) this.fail(this.pos, 'unterminated comment');
    this.pos = end + 3;
  }

  /** Parses the element at `pos` with everything inside it, iteratively (no recursion depth issue). */
  private elementTree(): XmlElement {
    const stack: OpenElement[] = [];
    const first = this.startTag(1);
    if (first.selfClosing) return freezeElement(first.open);
    stack.push(first.open);
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) return this.fail(this.pos, 'internal: empty element stack');
      if (this.pos >= this.src.length) {
        this.fail(this.pos, `unexpected end of the input: <${top.name}> opened at ${top.line}:${top.column} is not closed`);
      }
      if (this.src.charCodeAt(this.pos) !== 0x3c) {
        top.children.push(this.text());
      } else if (this.src.startsWith('</', this.pos)) {
        const closed = this.endTag(top);
        stack.pop();
        const parent = stack[stack.length - 1];
        if (parent === undefined) return closed;
        parent.children.push(closed);
      } else if (this.src.startsWith('<!--', this.pos)) {
        this.comment();
      } else if (this.src.startsWith('<![CDATA[', this.pos)) {
        top.children.push(this.cdata());
      } else if (this.src.startsWith('<!', this.pos) || this.src.startsWith('<?', this.pos)) {
        this.badMarkup();
      } else {
        const next = this.startTag(stack.length + 1);
        if (next.selfClosing) top.children.push(freezeElement(next.open));
        else stack.push(next.open);
      }
    }
  }

  private startTag(depth: number): { open: OpenElement; selfClosing: boolean } {
    const start = this.pos;
    if (depth > this.maxDepth) this.fail(start, `elements are nested deeper than ${this.maxDepth} levels`);
    this.pos++;
    const name = this.name('an element name');
    const { line, column } = this.locate(start);
    const parsed = this.attributes('>', `<${name}>`);
    const attributes = parsed.attrs.filter((a) => a.name !== 'xmlns' && !a.name.startsWith('xmlns:'));
    return { open: { name, line, column, attributes, children: [] }, selfClosing: parsed.selfClosing };
  }

  /** Attributes up to `terminator` (`>` also accepts `/>`); leaves `pos` after the terminator. */
  private attributes(terminator: '>' | '?>', where: string): { attrs: XmlAttribute[]; selfClosing: boolean } {
    const attrs: XmlAttribute[] = [];
    const seen = new Set<string>();
    for (;;) {
      const spaced = this.skipSpace();
      if (terminator === '>' && this.src.startsWith('/>', this.pos)) {
        this.pos += 2;
        return { attrs, selfClosing: true };
      }
      if (this.src.startsWith(terminator, this.pos)) {
        this.pos += terminator.length;
        return { attrs, selfClosing: false };
      }
      if (this.pos >= this.src.length) this.fail(this.pos, `unexpected end of the input in ${where}`);
      if (!spaced) this.fail(this.pos, `expected whitespace, "${terminator}" or an attribute in ${where}`);
      const start = this.pos;
      const name = this.name(`an attribute name, "${terminator}"${terminator === '>' ? ' or "/>"' : ''} in ${where}`);
      this.skipSpace();
      if (this.src.charCodeAt(this.pos) !== 0x3d) this.fail(this.pos, `expected "=" after attribute "${name}"`);
      this.pos++;
      this.skipSpace();
      const value = this.quoted(name);
      if (seen.has(name)) this.fail(start, `duplicate attribute "${name}" in ${where}`);
      seen.add(name);
      attrs.push({ name, value, ...this.locate(start) });
    }
  }

  private quoted(attrName: string): string {
    const quote = this.src[this.pos];
    if (quote !== '"' && quote !== "'") this.fail(this.pos, `expected a quoted value for attribute "${attrName}"`);
    const end = this.src.indexOf(quote, this.pos + 1);
    if (end < 0) this.fail(this.pos, `unterminated value of attribute "${attrName}"`);
    const lt = this.src.slice(this.pos + 1, end).indexOf('<');
    if (lt >= 0) this.fail(this.pos + 1 + lt, `"<" is not allowed in the value of attribute "${attrName}"`);
    const value = this.decode(this.pos + 1, end, true);
    this.pos = end + 1;
    return value;
  }

  private endTag(top: OpenElement): XmlElement {
    const start = this.pos;
    this.pos += 2;
    const name = this.name('an element name after "</"');
    this.skipSpace();
    if (this.src.charCodeAt(this.pos) !== 0x3e) this.fail(this.pos, `expected ">" to end </${name}>`);
    this.pos++;
    if (name !== top.name) {
      this.fail(start, `mismatched tag: </${name}> closes <${top.name}> opened at ${top.line}:${top.column}`);
    }
    return freezeElement(top);
  }

  private text(): XmlText {
    const start = this.pos;
    let end = this.src.indexOf('<', start);
    if (end < 0) end = this.src.length;
    const value = this.decode(start, end, false);
    this.pos = end;
    return Object.freeze({ kind: 'text', value, cdata: false, ...this.locate(start) });
  }

  private cdata(): XmlText {
    const start = this.pos;
    const end = this.src.indexOf(']]>', start + 9);
    if (end < 0) this.fail(start, 'unterminated CDATA section');
    this.pos = end + 3;
    return Object.freeze({ kind: 'text', value: this.src.slice(start + 9, end), cdata: true, ...this.locate(start) });
  }

  /** Decodes entity and character references in src[from, to); attribute values turn tabs and newlines into spaces. */
  private decode(from: number, to: number, attribute: boolean): string {
    // Searching a slice (not the whole source) keeps each search inside this value: linear overall.
    const raw = this.src.slice(from, to);
    let out = '';
    let i = 0;
    while (i < raw.length) {
      const amp = raw.indexOf('&', i);
      const stop = amp < 0 ? raw.length : amp;
      const chunk = raw.slice(i, stop);
      out += attribute ? chunk.replace(/[\t\n]/g, ' ') : chunk;
      if (stop === raw.length) break;
      const semi = raw.slice(stop, stop + ENTITY_SCAN_MAX).indexOf(';');
      if (semi < 0) this.fail(from + stop, '"&" must start a reference like &amp; or &#38;');
      out += this.reference(from + stop, raw.slice(stop + 1, stop + semi));
      i = stop + semi + 1;
    }
    return out;
  }

  private reference(at: number, body: string): string {
    // hasOwn: `&constructor;` must not find Object.prototype's members.
    const named = Object.hasOwn(PREDEFINED_ENTITIES, body) ? PREDEFINED_ENTITIES[body] : undefined;
    if (named !== undefined) return named;
    let code = NaN;
    if (/^#x[0-9a-fA-F]{1,6}$/.test(body)) code = parseInt(body.slice(2), 16);
    else if (/^#[0-9]{1,7}$/.test(body)) code = parseInt(body.slice(1), 10);
    else this.fail(at, `unknown entity &${body}; (only &lt; &gt; &amp; &apos; &quot; and character references are allowed)`);
    if (!isXmlCodePoint(code)) this.fail(at, `character reference &${body}; is not an allowed XML character`);
    return String.fromCodePoint(code);
  }

  /** An XML name (namespace prefixes included, as in `xsi:schemaLocation`). */
  private name(what: string): string {
    const start = this.pos;
    if (!isNameStart(this.src.charCodeAt(this.pos))) this.fail(this.pos, `expected ${what}`);
    this.pos++;
    while (this.pos < this.src.length && isNameChar(this.src.charCodeAt(this.pos))) this.pos++;
    return this.src.slice(start, this.pos);
  }

  /** Skips whitespace; says whether there was any. */
  private skipSpace(): boolean {
    const start = this.pos;
    while (isSpace(this.src.charCodeAt(this.pos))) this.pos++;
    return this.pos > start;
  }

  private locate(offset: number): XmlPosition {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (this.lineStarts[lo] ?? 0) + 1 };
  }

  private fail(offset: number, reason: string): never {
    const { line, column } = this.locate(offset);
    throw new XmlParseError(line, column, reason);
  }

  private failAt(pos: XmlPosition, reason: string): never {
    throw new XmlParseError(pos.line, pos.column, reason);
  }
}

function freezeElement(open: OpenElement): XmlElement {
  return Object.freeze({
    kind: 'element',
    name: open.name,
    line: open.line,
    column: open.column,
    attributes: Object.freeze(open.attributes.map((a) => Object.freeze(a))),
    children: Object.freeze(open.children),
  });
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a || c >= 0xc0;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0xb7;
}

/** XML 1.0 `Char`, checked per UTF-16 code unit: a surrogate must be half of a pair. */
function isXmlChar(c: number, next: number, prev: number): boolean {
  if (c < 0x20) return c === 0x09 || c === 0x0a || c === 0x0d;
  if (c >= 0xd800 && c <= 0xdbff) return isLowSurrogate(next);
  if (c >= 0xdc00 && c <= 0xdfff) return prev >= 0xd800 && prev <= 0xdbff;
  return c !== 0xfffe && c !== 0xffff;
}

function isXmlCodePoint(c: number): boolean {
  if (!Number.isInteger(c)) return false;
  if (c < 0x20) return c === 0x09 || c === 0x0a || c === 0x0d;
  if (c >= 0xd800 && c <= 0xdfff) return false;
  return c !== 0xfffe && c !== 0xffff && c <= 0x10ffff;
}
