import { net } from '../../platform/builtins.js';
import type { ListenSpec } from '../../platform/held-sockets.js';
import { formatIp, isAny, isLinkLocal, mappedV4, parseIp, type Ip } from './ip.js';

// `--listen [NAME=]ADDRESS`, read: `PORT` (every interface), `HOST:PORT`, `[V6]:PORT`. HOST is a literal
// address: no name is looked up at start (a resolver's answer would decide, at each start, what is exposed).

/** One held socket as asked for: its name, and where it listens (`host` undefined: every interface). */
export interface ListenAddress {
  readonly name: string;
  readonly host: string | undefined;
  readonly family: 4 | 6 | undefined;
  readonly port: number;
}

// systemd's rule for a name (FileDescriptorName=): printable ASCII but `:`, at most 255; here also no `,`
// (GSUP_LISTEN's separator) and no `=` (the name's own).
const NAME = /^[\x21-\x7e]{1,255}$/;
const NAME_FORBIDDEN = /[:,=]/;

/** `[NAME=]ADDRESS` read, or what is wrong with it (for a line that names the value). */
export function parseListen(text: string): ListenAddress | string {
  const equals = text.indexOf('=');
  const named = equals >= 0;
  const address = named ? text.slice(equals + 1) : text;
  const where = readAddress(address);
  if (typeof where === 'string') return where;
  const name = named ? text.slice(0, equals) : String(where.port);
  if (!NAME.test(name) || NAME_FORBIDDEN.test(name))
    return `the name ${JSON.stringify(name)} is not printable ASCII without spaces, ':', ',' or '=' (at most 255)`;
  return { name, ...where };
}

function readAddress(text: string): Omit<ListenAddress, 'name'> | string {
  if (/^\d+$/.test(text)) return withPort(text, undefined, undefined);
  if (/^\[[^\]]*\]$/.test(text)) return 'no port: expected [IPv6]:PORT';
  const v6 = /^\[([^\]]*)\]:([^:]*)$/.exec(text);
  if (v6) {
    // Read once, here; node:net only for what ip.ts does not read (a zone, or no address): its load is a few ms.
    const read = parseIp(v6[1]);
    const ip = read?.family === 6 ? read : undefined;
    if (!ip && !net().isIPv6(v6[1])) return `${JSON.stringify(v6[1])} is no IPv6 address`;
    // Its one spelling from here on: `[0::0]` is `[::]` (bound as it is), as GSUP_LISTEN_ID and the log say it.
    return ipv6Refused(v6[1], ip) ?? withPort(v6[2], ip ? formatIp(ip) : v6[1], 6);
  }
  const colon = text.lastIndexOf(':');
  if (colon < 0 || text.startsWith('[')) return 'expected PORT, HOST:PORT or [IPv6]:PORT';
  const host = text.slice(0, colon);
  // Dotted decimal as node:net's isIPv4 reads it (0-255, no leading zero), without loading node:net.
  if (parseIp(host)?.family === 4) return withPort(text.slice(colon + 1), host, 4);
  if (net().isIPv6(host)) return 'an IPv6 address goes in brackets: [HOST]:PORT';
  return `${JSON.stringify(host)} is no literal address (no name is looked up)`;
}

/** An IPv6 address (`ip`: as ip.ts read it) a bind would refuse with a word that says little (EINVAL): why. */
function ipv6Refused(host: string, ip: Ip | undefined): string | undefined {
  const shown = JSON.stringify(host);
  if (host.includes('%')) return `${shown} has a zone (%…), which --listen does not take`;
  // fe80::/10: bound only with an interface, which a zone would name.
  if (ip && isLinkLocal(ip))
    return `${shown} is link-local: it is bound only with an interface, which --listen does not take`;
  // However written (`::ffff:127.0.0.1`, `::ffff:7f00:1`): the address, not its text.
  const mapped = ip && mappedV4(ip);
  if (mapped) return `${shown} is an IPv4 address in IPv6 form: write ${mapped}:PORT`;
  return undefined;
}

function withPort(text: string, host: string | undefined, family: 4 | 6 | undefined) {
  // A leading zero reads as octal to some tools (080): which port was meant is not for gsup to guess.
  if (/^0\d/.test(text)) return `port ${JSON.stringify(text)} has a leading zero: write it without`;
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) return `port ${JSON.stringify(text)} is not 1-65535`;
  return { host, family, port };
}

/** The second of two addresses with one name (each name is unique: LISTEN_FDNAMES tells them apart). */
export function duplicateName(addresses: readonly ListenAddress[]): string | undefined {
  const seen = new Set<string>();
  for (const { name } of addresses) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** What a bind tries for an address, in order: every interface is `[::]` (IPv4 too), else 0.0.0.0. */
export function specsOf(address: ListenAddress): ListenSpec[] {
  const { host, family, port } = address;
  if (host === undefined || family === undefined)
    return [
      { family: 6, host: '::', port, dual: true },
      { family: 4, host: '0.0.0.0', port, dual: false },
    ];
  // `[::]` however written takes IPv4 too (IPV6_V6ONLY=0), as the preload takes it: by its address, not its text.
  const ip = family === 6 ? parseIp(host) : undefined;
  return [{ family, host, port, dual: ip !== undefined && isAny(ip) }];
}

/** An address as bound: `[::]:8080`, `0.0.0.0:8080`, `127.0.0.1:9000`. */
export function shownSpec(spec: ListenSpec): string {
  return spec.family === 6 ? `[${spec.host}]:${spec.port}` : `${spec.host}:${spec.port}`;
}
