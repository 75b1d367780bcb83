// Where an app's listen() lies against a held socket's address. Pure (no node: module): the preload bundles it.

import { formatIp, isAny, mappedV4, parseIp } from '../engine/listen/ip.js';

export interface HostPort {
  /** A literal address, without brackets: `::`, `0.0.0.0`, `127.0.0.1`, `::1`. */
  host: string;
  port: number;
}

/** `[::]:8080`, `0.0.0.0:8080`, `127.0.0.1:9000` (the address as gsup bound it); undefined when it is none. */
export function parseAddress(address: string): HostPort | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+(?:%[\w.-]+)?)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(address);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: normalHost(match[1] ?? match[2]), port };
}

/**
 * One spelling per address, from its bytes (two spellings of one address are one): IPv4-mapped IPv6 as IPv4
 * (`::ffff:7f00:1` is 127.0.0.1), IPv6 as RFC 5952 writes it (`0::0` is `::`); what is no literal, lower case.
 */
export function normalHost(host: string): string {
  const ip = parseIp(host);
  if (!ip) return host.toLowerCase();
  return mappedV4(ip) ?? formatIp(ip);
}

const isAnyHost = (host: string) => {
  const ip = parseIp(host);
  return ip !== undefined && isAny(ip);
};
const isV4 = (host: string) => parseIp(host)?.family === 4;

/**
 * Where the app's host lies against a held socket's host (both literal; the app's as Node resolved it, null for
 * none: every interface):
 * - `same`: what the app asked for — no host or its own wildcard over a wildcard, or the very address;
 * - `inside`: taken over with a warning naming both (`--listen` decides exposure) — any host under `[::]` (it
 *   takes IPv4 too), an IPv4 host under `0.0.0.0`, and every interface (no host, `::`, `0.0.0.0`) over any held
 *   address (the app would fail with EADDRINUSE beside it);
 * - `outside`: left alone — another address (`::1` under `0.0.0.0`, `10.0.0.2` under `127.0.0.1`).
 */
export function placement(app: string | null | undefined, held: string): 'same' | 'inside' | 'outside' {
  const host = app ? normalHost(app) : null;
  held = normalHost(held);
  if (host === held || (host === null && isAnyHost(held))) return 'same';
  if (host === null || isAnyHost(host)) return 'inside';
  // Every IPv6 wildcard gsup holds takes IPv4 too (IPV6_V6ONLY=0: engine/listen/address.ts); an IPv4 one, IPv4.
  if (isAnyHost(held) && (held.includes(':') || isV4(host))) return 'inside';
  return 'outside';
}

/** How an address is written in a line: `[::1]:8080`, `127.0.0.1:8080`, `every interface:8080`. */
export function showAddress(host: string | null | undefined, port: number): string {
  if (!host) return `every interface:${port}`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
