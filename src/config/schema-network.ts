// `<network>` and `<advanced-network>`: ports, interfaces, TCP-IP join, REST switch and endpoint
// groups, TLS.
// Declaring `rest-server-socket-endpoint-config` is what enables REST on that endpoint (rest.md §2),
// so the draft records the endpoint only when the element is present.
import { suggest } from './did-you-mean.js';
import { defaultGroups, defaultPort, defaultSsl, originKey, type DeepMutable, type Draft, type Origins } from './draft.js';
import { ENDPOINT_GROUPS, type EndpointGroup, type EndpointGroups, type PortConfig, type SslConfig } from './types.js';
import { parseInterfaceText } from './interface-pattern.js';
import type { ElementReader } from './xml-reader.js';
import { parseBoolean, parseEnum, parseHost, parseInteger, parseMemberAddress, parsePort, splitList, expectedGot } from './values.js';

const PORT_SHAPE = { attrs: ['auto-increment', 'port-count'], text: true } as const;
const SSL_SHAPE = { attrs: ['enabled', 'key-file', 'cert-file', 'ca-file', 'client-auth'] } as const;
const GROUP_SHAPE = { attrs: ['name', 'enabled'] } as const;

export function readNetwork(network: ElementReader, draft: Draft, origins: Origins): void {
  const n = draft.network;
  const publicAddress = network.child('public-address', { text: true });
  if (publicAddress !== undefined) n.publicAddress = publicAddress.typedText(parseHost);
  const port = network.child('port', PORT_SHAPE);
  if (port !== undefined) n.port = readPort(port, n.port);
  const interfaces = network.child('interfaces', { attrs: ['enabled'], many: ['interface'] });
  if (interfaces !== undefined) {
    // Patterns are checked here, with their line; whether one matches a local address is checked
    // once every source is applied (validate.ts), at the <interfaces> element.
    n.interfaces = {
      enabled: interfaces.typedAttr('enabled', parseBoolean, false),
      interfaces: interfaces.children('interface', { text: true }).map((i) => i.typedText(parseInterfaceText)),
    };
    origins.set(originKey.interfaces, interfaces.where());
  }
  const join = network.child('join', { one: ['tcp-ip', 'multicast'] });
  if (join !== undefined) readJoin(join, draft);
  const rest = network.child('rest-api', { attrs: ['enabled'], many: ['endpoint-group'], one: ['console'] });
  if (rest !== undefined) {
    n.restApi.enabled = rest.typedAttr('enabled', parseBoolean, false);
    readGroups(rest, n.restApi.groups);
    const console = rest.child('console', { attrs: ['enabled'] });
    if (console !== undefined) n.restApi.console.enabled = console.typedAttr('enabled', parseBoolean, true);
  }
  const client = network.child('client-protocol', { attrs: ['enabled'] });
  if (client !== undefined) n.clientProtocol.enabled = client.typedAttr('enabled', parseBoolean, true);
  const ssl = network.child('ssl', SSL_SHAPE);
  if (ssl !== undefined) {
    n.ssl = readSsl(ssl);
    origins.set(originKey.networkSsl, ssl.where());
  }
}

function readJoin(join: ElementReader, draft: Draft): void {
  const multicast = join.child('multicast', { attrs: ['enabled'] });
  if (multicast !== undefined && multicast.typedAttr('enabled', parseBoolean, false)) {
    multicast.fail(multicast.element, '<multicast>: multicast join is not supported, use <tcp-ip>');
  }
  const tcp = join.child('tcp-ip', { attrs: ['enabled', 'connection-timeout-seconds'], one: ['member-list'] });
  if (tcp === undefined) return;
  const t = draft.network.join.tcpIp;
  t.enabled = tcp.typedAttr('enabled', parseBoolean, false);
  t.connectionTimeoutSeconds = tcp.typedAttr('connection-timeout-seconds', (raw) => parseInteger(raw, 1, 3600), t.connectionTimeoutSeconds);
  const list = tcp.child('member-list', { many: ['member'] });
  if (list === undefined) return;
  t.members = [];
  for (const m of list.children('member', { text: true })) {
    // One <member> may hold several addresses separated by commas, as in the reference.
    const text = m.text();
    const items = splitList(text);
    if (items.length === 0) m.fail(m.element, `${m.label}: ${expectedGot('host, host:port or host:port1-port2', text)}`);
    for (const item of items) t.members.push(m.must(parseMemberAddress(item), item));
  }
}

/** `<port auto-increment= port-count=>5701</port>`; missing attributes keep `base`'s values. */
function readPort(port: ElementReader, base: DeepMutable<PortConfig>): DeepMutable<PortConfig> {
  return {
    port: port.typedText((raw) => parsePort(raw, 1)),
    autoIncrement: port.typedAttr('auto-increment', parseBoolean, base.autoIncrement),
    portCount: port.typedAttr('port-count', (raw) => parseInteger(raw, 1, 65535), base.portCount),
  };
}

export function readSsl(ssl: ElementReader): DeepMutable<SslConfig> {
  const d = defaultSsl();
  return {
    enabled: ssl.typedAttr('enabled', parseBoolean, d.enabled),
    keyFile: ssl.attr('key-file') ?? d.keyFile,
    certFile: ssl.attr('cert-file') ?? d.certFile,
    caFile: ssl.attr('ca-file') ?? d.caFile,
    clientAuth: ssl.typedAttr('client-auth', (raw) => parseEnum(raw.toLowerCase(), ['none', 'optional', 'required'] as const), d.clientAuth),
  };
}

/** Group names accepted in configuration: the real ones, plus HOT_RESTART for PERSISTENCE. */
export function parseGroupName(raw: string): { ok: true; value: EndpointGroup } | { ok: false; expected: string } {
  const r = parseEnum<EndpointGroup>(raw, ENDPOINT_GROUPS, { HOT_RESTART: 'PERSISTENCE' });
  if (r.ok) return r;
  const hint = suggest(raw.trim(), [...ENDPOINT_GROUPS, 'HOT_RESTART']);
  return { ok: false, expected: `an endpoint group (${ENDPOINT_GROUPS.join(', ')}; HOT_RESTART = PERSISTENCE)${hint === null ? '' : ` (did you mean ${hint}?)`}` };
}

/** `<endpoint-group name= enabled=>` children switch groups on or off; a group named twice is an error. */
function readGroups(parent: ElementReader, groups: DeepMutable<EndpointGroups>): void {
  const seen = new Map<EndpointGroup, string>();
  for (const g of parent.children('endpoint-group', GROUP_SHAPE)) {
    const name = g.requiredTypedAttr('name', parseGroupName);
    const first = seen.get(name);
    if (first !== undefined) g.fail(g.element, `<endpoint-group>: group ${name} is given twice (first at ${first})`);
    seen.set(name, `${g.element.line}:${g.element.column}`);
    // A declared group without `enabled` is switched on: declaring it says you want it.
    groups[name] = g.typedAttr('enabled', parseBoolean, true);
  }
}

export function readAdvancedNetwork(adv: ElementReader, draft: Draft, origins: Origins): void {
  const a = draft.advancedNetwork;
  a.enabled = adv.typedAttr('enabled', parseBoolean, false);
  origins.set(originKey.advancedNetwork, adv.where());
  const member = adv.child('member-server-socket-endpoint-config', { one: ['port'] });
  if (member !== undefined) a.memberEndpoint = { port: endpointPort(member, 5701) };
  const rest = adv.child('rest-server-socket-endpoint-config', { one: ['port', 'endpoint-groups', 'ssl'] });
  if (rest !== undefined) {
    const groups = defaultGroups();
    const list = rest.child('endpoint-groups', { many: ['endpoint-group'] });
    if (list !== undefined) readGroups(list, groups);
    const ssl = rest.child('ssl', SSL_SHAPE);
    if (ssl !== undefined) origins.set(originKey.restSsl, ssl.where());
    a.restEndpoint = { port: endpointPort(rest, 8080), groups, ssl: ssl === undefined ? defaultSsl() : readSsl(ssl) };
  }
  a.wanEndpoints = [];
  for (const wan of adv.children('wan-server-socket-endpoint-config', { attrs: ['name'], one: ['port'] })) {
    const name = wan.requiredAttr('name').trim();
    if (name === '') wan.fail(wan.element, '<wan-server-socket-endpoint-config> needs a non-empty name');
    if (a.wanEndpoints.some((w) => w.name === name)) wan.fail(wan.element, `<wan-server-socket-endpoint-config>: name ${name} is given twice`);
    a.wanEndpoints.push({ name, port: endpointPort(wan, 11010) });
  }
}

function endpointPort(endpoint: ElementReader, fallbackPort: number): DeepMutable<PortConfig> {
  const port = endpoint.child('port', PORT_SHAPE);
  return port === undefined ? defaultPort(fallbackPort) : readPort(port, defaultPort(fallbackPort));
}
