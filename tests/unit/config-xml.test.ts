// Checks src/config/xml.ts, the configuration XML parser, by example: what it accepts (declaration,
// attributes in both quote styles, text, comments, CDATA, predefined entities, character references,
// namespaces ignored, CRLF, BOM) and what it rejects with an XmlParseError at the right line:column
// (DOCTYPE/XXE, processing instructions, unknown entities, mismatched tags, duplicate attributes,
// content after the root, size and depth limits, forbidden characters). Also a timing check that a
// large input of each construct parses in linear-ish time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseXml, XmlParseError, type XmlElement, type XmlNode } from '../../src/config/xml.js';
import { GridError } from '../../src/util/errors.js';

function rejects(xml: string, reason: RegExp, line?: number, column?: number, limits = {}): void {
  assert.throws(
    () => parseXml(xml, limits),
    (e: unknown) => {
      assert.ok(e instanceof XmlParseError, `expected XmlParseError, got ${String(e)}`);
      assert.match(e.reason, reason);
      if (line !== undefined) assert.equal(e.line, line, `line of: ${e.message}`);
      if (column !== undefined) assert.equal(e.column, column, `column of: ${e.message}`);
      assert.equal(e.message, `${e.line}:${e.column}: ${e.reason}`);
      return true;
    },
  );
}

const elements = (el: XmlElement): XmlElement[] => el.children.filter((c: XmlNode): c is XmlElement => c.kind === 'element');
const textOf = (el: XmlElement): string => el.children.map((c) => (c.kind === 'text' ? c.value : '')).join('');

test('parses elements, attributes, text and positions', () => {
  const root = parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<grid a="1" b=\'two\'>\n  <x>hi</x>\n  <y/>\n</grid>\n');
  assert.equal(root.name, 'grid');
  assert.deepEqual(
    root.attributes.map((a) => [a.name, a.value, a.line, a.column]),
    [
      ['a', '1', 2, 7],
      ['b', 'two', 2, 13],
    ],
  );
  const [x, y] = elements(root);
  assert.equal(x?.name, 'x');
  assert.equal(x?.line, 3);
  assert.equal(x?.column, 3);
  assert.equal(textOf(x!), 'hi');
  assert.equal(y?.name, 'y');
  assert.deepEqual(y?.children, []);
  assert.equal(root.line, 2);
  assert.equal(root.column, 1);
});

test('decodes predefined entities and character references in text and attributes', () => {
  const root = parseXml('<r v="&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#x1F600;">a&amp;b&#10;&#x263A;</r>');
  assert.equal(root.attributes[0]?.value, `<>&'"AB\u{1F600}`);
  assert.equal(textOf(root), 'a&b\n\u263A');
});

test('attribute values turn literal tabs and newlines into spaces, references stay', () => {
  const root = parseXml('<r v="a\tb\nc&#10;d"/>');
  assert.equal(root.attributes[0]?.value, 'a b c\nd');
});

test('CDATA is literal text; comments are dropped anywhere', () => {
  const root = parseXml('<!-- before --><r><!-- in --><![CDATA[<x>&amp;]]>t</r><!-- after -->');
  assert.equal(textOf(root), '<x>&amp;t');
  assert.equal(root.children.length, 2);
  assert.equal(root.children[0]?.kind === 'text' && root.children[0].cdata, true);
});

test('xmlns attributes are dropped, prefixed attributes are kept', () => {
  const root = parseXml('<grid xmlns="http://x" xmlns:xsi="http://y" xsi:schemaLocation="z"/>');
  assert.deepEqual(root.attributes.map((a) => a.name), ['xsi:schemaLocation']);
});

test('CRLF and CR count as one line break; a BOM is skipped', () => {
  const root = parseXml('\uFEFF<r>\r\n<a/>\r<b/></r>');
  const [a, b] = elements(root);
  assert.equal(a?.line, 2);
  assert.equal(b?.line, 3);
  assert.equal(b?.column, 1);
});

test('rejects DOCTYPE and DTDs, so no external entity can be declared (XXE)', () => {
  rejects('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>', /DOCTYPE/, 1, 1);
  rejects('<?xml version="1.0"?>\n<!DOCTYPE r>\n<r/>', /DOCTYPE/, 2, 1);
  rejects('<r><!DOCTYPE r></r>', /DOCTYPE/, 1, 4);
  rejects('<r><!ENTITY x "y"></r>', /unexpected markup/, 1, 4);
});

test('rejects unknown entities, a bare ampersand and bad character references', () => {
  rejects('<r>\n  &xxe;</r>', /unknown entity &xxe;/, 2, 3);
  rejects('<r a="&nbsp;"/>', /unknown entity/, 1, 7);
  rejects('<r>a & b</r>', /must start a reference/, 1, 6);
  rejects('<r>&#0;</r>', /not an allowed XML character/);
  rejects('<r>&#xD800;</r>', /not an allowed XML character/);
  rejects('<r>&#x110000;</r>', /not an allowed XML character|must start/);
  rejects('<r>&#xZZ;</r>', /unknown entity/);
});

test('rejects processing instructions and a late declaration', () => {
  rejects('<?xml-stylesheet href="a"?><r/>', /processing instructions/, 1, 1);
  rejects('<r><?php echo 1 ?></r>', /processing instructions/, 1, 4);
  rejects(' <?xml version="1.0"?><r/>', /only allowed at the very start/, 1, 2);
  rejects('<?xml encoding="UTF-8"?><r/>', /needs a version/);
  rejects('<?xml version="1.0" foo="1"?><r/>', /unknown attribute "foo"/);
});

test('rejects mismatched and unclosed tags', () => {
  rejects('<a>\n  <b></a>', /mismatched tag: <\/a> closes <b> opened at 2:3/, 2, 6);
  rejects('<a><b>', /<b> opened at 1:4 is not closed/);
  rejects('<a', /end of the input/);
  rejects('</a>', /expected an element name|expected the root/);
});

test('rejects duplicate attributes, malformed attributes and "<" in values', () => {
  rejects('<a x="1" x="2"/>', /duplicate attribute "x"/, 1, 10);
  rejects('<a x="1"y="2"/>', /expected whitespace/);
  rejects('<a x=1/>', /quoted value/);
  rejects('<a x="1/>', /unterminated value/);
  rejects('<a x="<"/>', /"<" is not allowed/, 1, 7);
  rejects('<a x/>', /expected "="/);
});

test('rejects anything after the root, text outside the root and an empty document', () => {
  rejects('<a/><b/>', /content after the root/, 1, 5);
  rejects('<a/>x', /content after the root/);
  rejects('x<a/>', /found text/);
  rejects('', /end of the input/);
  rejects('  <!-- only -->  ', /end of the input/);
});

test('rejects unterminated comments and CDATA sections', () => {
  rejects('<a><!-- x</a>', /unterminated comment/, 1, 4);
  rejects('<a><![CDATA[ x</a>', /unterminated CDATA/, 1, 4);
});

test('rejects characters XML forbids, with their position', () => {
  rejects('<a>\n x\u0001</a>', /U\+0001/, 2, 3);
  rejects('<a>\uD800</a>', /U\+D800/);
  rejects('<a>\uFFFF</a>', /U\+FFFF/);
});

test('enforces the size limit in UTF-8 bytes (default 1 MiB)', () => {
  const big = `<a>${'x'.repeat(1024 * 1024)}</a>`;
  rejects(big, /larger than 1048576 bytes/);
  rejects('<a>éé</a>', /larger than 10 bytes/, 1, 1, { maxBytes: 10 });
  assert.equal(parseXml('<a>é</a>', { maxBytes: 10 }).name, 'a');
});

test('enforces the depth limit (default 64)', () => {
  const nest = (n: number): string => '<a>'.repeat(n) + '</a>'.repeat(n);
  assert.equal(parseXml(nest(64)).name, 'a');
  rejects(nest(65), /nested deeper than 64/, 1, 193);
  rejects(nest(4), /deeper than 3/, undefined, undefined, { maxDepth: 3 });
});

test('every error is an XmlParseError, which is a GridError with ERR_CONFIG_INVALID', () => {
  try {
    parseXml('<a>');
    assert.fail('no error');
  } catch (e) {
    assert.ok(e instanceof GridError);
    assert.equal(e.code, 'ERR_CONFIG_INVALID');
  }
});

test('time stays linear-ish on large inputs of every construct', () => {
  const cases = [
    `<a>${'<b x="1" y="&amp;"/>'.repeat(40000)}</a>`,
    `<a>${'&amp;'.repeat(150000)}</a>`,
    `<a>${'x<!--c-->'.repeat(80000)}</a>`,
    `<a>${'<![CDATA[x]]>'.repeat(60000)}</a>`,
    `<a ${Array.from({ length: 30000 }, (_, i) => `a${i}="v"`).join(' ')}/>`,
    `<a>${'\n'.repeat(900000)}</a>`,
  ];
  for (const xml of cases) {
    // CPU time, not wall time: a runner descheduled on a busy machine is not a slow parser.
    const start = process.cpuUsage();
    parseXml(xml);
    const used = process.cpuUsage(start);
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 2000, `took ${ms} ms of CPU for ${xml.slice(0, 30)}`);
  }
});

test('only UTF-8 may be declared: files are read as UTF-8', () => {
  rejects('<?xml version="1.0" encoding="ISO-8859-1"?>\n<grid/>', /encoding "ISO-8859-1" is not supported/, 1, 21);
  assert.equal(parseXml('<?xml version="1.0" encoding="utf8"?><grid/>').name, 'grid');
});
