// A literal IP address as its bytes, so that two spellings of one address are one (`[0::0]` is `[::]`,
// `::ffff:7f00:1` is `::ffff:127.0.0.1`): what gsup binds and what the preload compares are addresses, never
// their text. Pure (no node: module): the preload bundles it.

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address. */
export interface Ip {
  readonly family: 4 | 6;
  readonly bytes: readonly number[];
}

/** Dotted decimal, each part 0-255 without a leading zero; else undefined. */
function v4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

/** Eight groups of hex, `::` for a run of zero groups (once), a dotted IPv4 address as the last two; else undefined. */
function v6Bytes(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = halves.map((half) => (half === '' ? [] : half.split(':')));
  const last = groups[groups.length - 1];
  let v4: number[] = [];
  if (last.length > 0 && last[last.length - 1].includes('.')) {
    const bytes = v4Bytes(last.pop()!);
    if (!bytes) return undefined;
    v4 = bytes;
  }
  const words = groups.flat();
  if (!words.every((word) => /^[0-9a-f]{1,4}$/i.test(word))) return undefined;
  const count = words.length + v4.length / 2;
  if (halves.length === 2 ? count > 7 : count !== 8) return undefined;
  const zeros = Array<string>(8 - count).fill('0');
  const all = halves.length === 2 ? [...groups[0], ...zeros, ...groups[1]] : words;
  return [...all.flatMap((word) => [parseInt(word, 16) >> 8, parseInt(word, 16) & 0xff]), ...v4];
}

/** A literal address (IPv6 without brackets or zone), or undefined when it is none. */
export function parseIp(text: string): Ip | undefined {
  const four = v4Bytes(text);
  if (four) return { family: 4, bytes: four };
  const six = text.includes(':') ? v6Bytes(text) : undefined;
  return six && { family: 6, bytes: six };
}

/** Every interface of its family: `0.0.0.0`, `::` (however written). */
export function isAny(ip: Ip): boolean {
  return ip.bytes.every((byte) => byte === 0);
}

/** The IPv4 address an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`) stands for, dotted; else undefined. */
export function mappedV4(ip: Ip): string | undefined {
  const { bytes } = ip;
  if (ip.family !== 6 || bytes.slice(0, 10).some((byte) => byte !== 0) || bytes[10] !== 0xff || bytes[11] !== 0xff)
    return undefined;
  return bytes.slice(12).join('.');
}

/** fe80::/10: bound only with an interface (a zone). */
export function isLinkLocal(ip: Ip): boolean {
  return ip.family === 6 && ip.bytes[0] === 0xfe && (ip.bytes[1] & 0xc0) === 0x80;
}

/** The one spelling of an address (RFC 5952: lower case, the longest run of zero groups as `::`). */
export function formatIp(ip: Ip): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const mapped = mappedV4(ip);
  if (mapped) return `::ffff:${mapped}`;
  const words = Array.from({ length: 8 }, (_, index) => (ip.bytes[2 * index] << 8) | ip.bytes[2 * index + 1]);
  let [best, bestLength] = [-1, 1];
  for (let start = 0; start < 8; start++) {
    let end = start;
    while (end < 8 && words[end] === 0) end++;
    if (end - start > bestLength) [best, bestLength] = [start, end - start];
  }
  const hex = (from: number, to: number) => words.slice(from, to).map((word) => word.toString(16));
  if (best < 0) return hex(0, 8).join(':');
  return `${hex(0, best).join(':')}::${hex(best + bestLength, 8).join(':')}`;
}
