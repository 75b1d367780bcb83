import { describe, expect, it } from 'vitest';
import { formatIp, isAny, isLinkLocal, mappedV4, parseIp } from '../../../src/engine/listen/ip.js';

// A literal address as its bytes (issue 35, 5b): two spellings of one address are one. The spelling checked
// against Node's own (WHATWG URL's canonical IPv6, which writes a mapped address in hex).

const canonical = (text: string) => new URL(`http://[${text}]/`).hostname.slice(1, -1);

describe('parseIp and formatIp', () => {
  it.each([
    '::',
    '0::0',
    '0:0:0:0:0:0:0:0',
    '::1',
    '1::',
    '2001:DB8:0:0:8:800:200C:417A',
    '2001:db8:0:0:1:0:0:1',
    '2001:0:0:1:0:0:0:1',
    '1:2:3:4:5:6:7:8',
    '1:0:3:4:5:6:7:8',
    'fe80::1:2',
    '::2:3:4:5:6:7:8',
    '64:ff9b::192.0.2.33',
  ])('%s: one spelling, as Node writes it', (text) => {
    const ip = parseIp(text);
    expect(ip?.family).toBe(6);
    expect(formatIp(ip!)).toBe(canonical(text));
  });

  it('IPv4, and IPv4-mapped IPv6 however written', () => {
    expect(parseIp('127.0.0.1')).toEqual({ family: 4, bytes: [127, 0, 0, 1] });
    for (const text of ['::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:FFFF:7F00:0001', '::0:ffff:127.0.0.1']) {
      expect(mappedV4(parseIp(text)!)).toBe('127.0.0.1');
      expect(formatIp(parseIp(text)!)).toBe('::ffff:127.0.0.1');
    }
    expect(mappedV4(parseIp('::1')!)).toBeUndefined();
  });

  it.each([
    '',
    ':',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '::1:2:3:4:5:6:7:8',
    '12345::',
    'g::',
    '1.2.3',
    '256.0.0.1',
    '01.2.3.4',
    '::1.2.3',
    'localhost',
    '1.2.3.4::',
  ])('%j is none', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('every interface, link-local: by the bytes', () => {
    expect(['::', '0::0', '0.0.0.0', '0:0:0:0:0:0:0:0'].map((text) => isAny(parseIp(text)!))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(isAny(parseIp('::1')!)).toBe(false);
    expect(['fe80::1', 'FEBF::', 'fe80:0000::1'].every((text) => isLinkLocal(parseIp(text)!))).toBe(true);
    expect(['fec0::1', 'fe8::1', 'fe7f::1'].some((text) => isLinkLocal(parseIp(text)!))).toBe(false);
  });
});
