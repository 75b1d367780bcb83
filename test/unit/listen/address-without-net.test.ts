import { describe, expect, it, vi } from 'vitest';

// A literal address is read without node:net (its load is a few ms of a `--listen HOST:PORT` start): net() throws
// here, so a read that still reached for it fails. Only what ip.ts cannot read (a zone, a host that is no address)
// may take node:net's word.
vi.mock('../../../src/platform/builtins.js', async (original) => ({
  ...(await original<typeof import('../../../src/platform/builtins.js')>()),
  net: () => {
    throw new Error('node:net was loaded');
  },
}));

const { parseListen } = await import('../../../src/engine/listen/address.js');

describe('parseListen without node:net', () => {
  it.each([
    ['127.0.0.1:9000', { name: '9000', host: '127.0.0.1', family: 4, port: 9000 }],
    ['0.0.0.0:80', { name: '80', host: '0.0.0.0', family: 4, port: 80 }],
    ['[::1]:65535', { name: '65535', host: '::1', family: 6, port: 65535 }],
    ['[0::0]:80', { name: '80', host: '::', family: 6, port: 80 }],
    ['8080', { name: '8080', host: undefined, family: undefined, port: 8080 }],
  ])('%s', (text, expected) => {
    expect(parseListen(text)).toEqual(expected);
  });

  it('refusals of a literal address need no node:net either', () => {
    expect(parseListen('[::ffff:127.0.0.1]:80')).toBe(
      '"::ffff:127.0.0.1" is an IPv4 address in IPv6 form: write 127.0.0.1:PORT',
    );
    expect(parseListen('[fe80::1]:8080')).toMatch(/is link-local/);
  });

  it('what ip.ts cannot read goes to node:net (here: it throws)', () => {
    expect(() => parseListen('[fe80::1%eth0]:8080')).toThrow('node:net was loaded');
    expect(() => parseListen('[1.2.3.4]:80')).toThrow('node:net was loaded');
  });
});
