import { describe, expect, it } from 'vitest';
import { normalHost, parseAddress, placement, showAddress } from '../../../src/listen-preload/address.js';

describe('held addresses', () => {
  it.each([
    ['[::]:8080', { host: '::', port: 8080 }],
    ['0.0.0.0:80', { host: '0.0.0.0', port: 80 }],
    ['127.0.0.1:9000', { host: '127.0.0.1', port: 9000 }],
    ['[::1]:443', { host: '::1', port: 443 }],
    ['[FE80::1]:1', { host: 'fe80::1', port: 1 }],
  ])('%s', (address, parsed) => {
    expect(parseAddress(address)).toEqual(parsed);
  });

  it.each(['8080', '[::]', ':8080', 'localhost:80', '[::]:0', '[::]:65536', '1.2.3:4'])('%s is none', (address) => {
    expect(parseAddress(address)).toBeUndefined();
  });

  it('one spelling per address', () => {
    expect(normalHost('::FFFF:127.0.0.1')).toBe('127.0.0.1');
    expect(normalHost('0:0:0:0:0:ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(normalHost('0:0:0:0:0:0:0:0')).toBe('::');
    expect(normalHost('::0')).toBe('::');
    expect(normalHost('::1')).toBe('::1');
    // The bytes, not the text (issue 35, 5b).
    expect(normalHost('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(normalHost('0::0')).toBe('::');
    expect(normalHost('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(normalHost('localhost')).toBe('localhost');
  });
});

describe("where an app's listen lies against the held address", () => {
  it.each([
    // [app host (as Node resolved it; null: none), held host, placement]
    [null, '::', 'same'],
    [null, '0.0.0.0', 'same'],
    ['::', '::', 'same'],
    ['127.0.0.1', '127.0.0.1', 'same'],
    ['::ffff:127.0.0.1', '127.0.0.1', 'same'],
    ['0.0.0.0', '::', 'inside'], // the usual Docker line, under gsup's [::]
    ['127.0.0.1', '::', 'inside'], // localhost as Node resolved it
    ['::1', '::', 'inside'],
    ['10.1.2.3', '::', 'inside'],
    ['127.0.0.1', '0.0.0.0', 'inside'],
    ['::', '0.0.0.0', 'inside'],
    [null, '127.0.0.1', 'inside'], // every interface over a narrower held address: --listen decides
    ['0.0.0.0', '127.0.0.1', 'inside'],
    ['::1', '0.0.0.0', 'outside'],
    ['127.0.0.2', '127.0.0.1', 'outside'],
    ['::1', '127.0.0.1', 'outside'],
    ['10.0.0.2', '::1', 'outside'],
    ['0.0.0.0', '0::0', 'inside'], // gsup holds [0::0] as [::], dual-stack
    ['::ffff:7f00:1', '127.0.0.1', 'same'],
    ['0:0::0', '::', 'same'],
  ] as const)('%s against %s: %s', (app, held, place) => {
    expect(placement(app, held)).toBe(place);
  });

  it('says addresses as a line shows them', () => {
    expect(showAddress('::', 80)).toBe('[::]:80');
    expect(showAddress('0.0.0.0', 80)).toBe('0.0.0.0:80');
    expect(showAddress(null, 80)).toBe('every interface:80');
  });
});
