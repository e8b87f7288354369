// Walks the XML tree of a configuration file into the draft. This file reads the root `<grid>` and
// the small top-level elements; network, data structures and cluster features have their own files.
// Shape errors (unknown or repeated elements) are found by ElementReader as each element is opened;
// rules that span several values are checked later by validate.ts, once every source is applied.
import { ConfigError } from './config-error.js';
import { suggest } from './did-you-mean.js';
import { originKey, type Draft, type Origins } from './draft.js';
import { substitutePlaceholders } from './placeholders.js';
import { findPropertySpec, GRID_PROPERTY_SPECS, isGridPropertyName, parsePropertyValue, setProperty } from './properties.js';
import { readAdvancedNetwork, readNetwork } from './schema-network.js';
import { readCpSubsystem, readPersistence, readSecurity } from './schema-cluster.js';
import { readMaps, readQueues, readWanReplications } from './schema-structures.js';
import { LOG_LEVELS, type LogFormat } from './types.js';
import { ElementReader, type XmlContext } from './xml-reader.js';
import type { XmlElement, XmlPosition } from './xml.js';
import { expectedGot, parseBoolean, parseEnum, parseName } from './values.js';

export interface SchemaInput {
  readonly root: XmlElement;
  readonly file: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly origins: Origins;
}

const ROOT_CHILDREN_ONE = [
  'cluster-name',
  'instance-name',
  'properties',
  'lite-member',
  'network',
  'advanced-network',
  'persistence',
  'security',
  'cp-subsystem',
  'logging',
] as const;

export function applyXml(draft: Draft, input: SchemaInput): void {
  const { root, file, env } = input;
  if (root.name !== 'grid') {
    const hint = root.name === 'hazelcast' ? ' (rename the root element of a Hazelcast file to <grid>)' : '';
    throw new ConfigError(`${file}:${root.line}:${root.column}`, `the root element must be <grid>, got <${root.name}>${hint}`);
  }
  // Properties are read first so placeholders anywhere in the file can use them; their own values
  // may only use environment variables.
  const envOnly: XmlContext = { file, substitute: substituter(file, (n) => own(env, n)) };
  const props = readProperties(root, envOnly, draft, input.origins);
  const ctx: XmlContext = { file, substitute: substituter(file, (n) => own(props, n) ?? own(env, n)) };
  const grid = new ElementReader(root, ctx, {
    attrs: ['xsi:schemaLocation', 'xsi:noNamespaceSchemaLocation'],
    one: ROOT_CHILDREN_ONE,
    many: ['map', 'queue', 'wan-replication'],
  }, null);

  draft.clusterName = grid.leaf('cluster-name', parseName, draft.clusterName);
  draft.instanceName = grid.leaf('instance-name', parseName, draft.instanceName);
  const lite = grid.child('lite-member', { attrs: ['enabled'] });
  if (lite !== undefined) draft.liteMember = lite.typedAttr('enabled', parseBoolean, false);
  const logging = grid.child('logging', { attrs: ['level', 'format'] });
  if (logging !== undefined) {
    draft.logging.level = logging.typedAttr('level', (raw) => parseEnum(raw, LOG_LEVELS), draft.logging.level);
    draft.logging.format = logging.typedAttr('format', (raw) => parseEnum<LogFormat>(raw.toLowerCase(), ['text', 'json']), draft.logging.format);
  }
  const network = grid.child('network', { one: ['public-address', 'port', 'interfaces', 'join', 'rest-api', 'client-protocol', 'ssl'] });
  if (network !== undefined) readNetwork(network, draft, input.origins);
  const advanced = grid.child('advanced-network', {
    attrs: ['enabled'],
    one: ['member-server-socket-endpoint-config', 'rest-server-socket-endpoint-config'],
    many: ['wan-server-socket-endpoint-config'],
  });
  if (advanced !== undefined) readAdvancedNetwork(advanced, draft, input.origins);
  readMaps(grid, draft, input.origins);
  readQueues(grid, draft, input.origins);
  readWanReplications(grid, draft, input.origins);
  readPersistence(grid, draft, input.origins);
  readSecurity(grid, draft, input.origins);
  readCpSubsystem(grid, draft, input.origins);
}

/** A lookup that never finds Object.prototype members (`${constructor}` is simply undefined). */
function own(record: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

function substituter(file: string, lookup: (name: string) => string | undefined): (raw: string, at: XmlPosition) => string {
  return (raw, at) => {
    const result = substitutePlaceholders(raw, lookup);
    if (!result.ok) {
      throw new ConfigError(`${file}:${at.line}:${at.column}`, `placeholder \${${result.name}} is not defined in <properties> or the environment`);
    }
    return result.value;
  };
}

/** `<properties><property name="grid.x">v</property>...` → raw properties plus typed grid ones. */
function readProperties(root: XmlElement, ctx: XmlContext, draft: Draft, origins: Origins): Record<string, string> {
  const raw: Record<string, string> = {};
  const el = root.children.find((c): c is XmlElement => c.kind === 'element' && c.name === 'properties');
  if (el === undefined) return raw;
  const properties = new ElementReader(el, ctx, { many: ['property'] }, 'grid');
  const seen = new Map<string, XmlPosition>();
  for (const p of properties.children('property', { attrs: ['name'], text: true })) {
    const name = p.requiredAttr('name').trim();
    const first = seen.get(name);
    if (first !== undefined) p.fail(p.element, `property ${name} is given twice (first at ${first.line}:${first.column})`);
    seen.set(name, p.element);
    const value = p.text();
    // defineProperty, so a property named __proto__ is stored like any other name.
    Object.defineProperty(raw, name, { value, enumerable: true, writable: true, configurable: true });
    if (isGridPropertyName(name)) setGridProperty(draft, name, value, p.where(), origins);
    else Object.defineProperty(draft.rawProperties, name, { value, enumerable: true, writable: true, configurable: true });
  }
  // `raw` (grid.* included) feeds placeholders; the Config keeps grid.* only in typed `properties`.
  return raw;
}

/** Sets a typed `grid.*` property; `where` names the source for messages. Shared with env.ts. */
export function setGridProperty(draft: Draft, name: string, value: string, where: string, origins: Origins): void {
  const spec = findPropertySpec(name);
  if (spec === undefined) {
    const hint = suggest(name, GRID_PROPERTY_SPECS.map((s) => s.name));
    throw new ConfigError(where, `unknown property ${name}${hint === null ? '' : ` (did you mean ${hint}?)`}`);
  }
  const parsed = parsePropertyValue(spec, value);
  if (!parsed.ok) throw new ConfigError(where, `property ${name}: ${expectedGot(parsed.expected, value)}`);
  setProperty(draft.properties, spec, parsed.value);
  origins.set(originKey.property(spec.key), where);
}
