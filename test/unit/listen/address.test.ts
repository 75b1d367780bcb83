import { describe, expect, it } from 'vitest';
import { duplicateName, parseListen, shownSpec, specsOf } from '../../../src/engine/listen/address.js';

// `--listen [NAME=]ADDRESS` read: every form, every refusal; what a bind then tries.

describe('parseListen', () => {
  it.each([
    ['8080', { name: '8080', host: undefined, family: undefined, port: 8080 }],
    ['web=8080', { name: 'web', host: undefined, family: undefined, port: 8080 }],
    ['127.0.0.1:9000', { name: '9000', host: '127.0.0.1', family: 4, port: 9000 }],
    ['admin=0.0.0.0:1', { name: 'admin', host: '0.0.0.0', family: 4, port: 1 }],
    ['[::1]:65535', { name: '65535', host: '::1', family: 6, port: 65535 }],
    ['v6=[::]:80', { name: 'v6', host: '::', family: 6, port: 80 }],
    ['[2001:db8::1]:443', { name: '443', host: '2001:db8::1', family: 6, port: 443 }],
    // One spelling per address (issue 35, 5b): `[0::0]` is `[::]`, bound and named as it.
    ['[0::0]:80', { name: '80', host: '::', family: 6, port: 80 }],
    ['[0:0:0:0:0:0:0:0]:80', { name: '80', host: '::', family: 6, port: 80 }],
    ['[2001:DB8:0:0::0001]:443', { name: '443', host: '2001:db8::1', family: 6, port: 443 }],
    ['a.b-c_d=8080', { name: 'a.b-c_d', host: undefined, family: undefined, port: 8080 }],
  ])('%s', (text, expected) => {
    expect(parseListen(text)).toEqual(expected);
  });

  it.each([
    ['0', 'port "0" is not 1-65535'],
    ['65536', 'port "65536" is not 1-65535'],
    ['web=', 'expected PORT, HOST:PORT or [IPv6]:PORT'],
    ['127.0.0.1:', 'port "" is not 1-65535'],
    ['127.0.0.1:http', 'port "http" is not 1-65535'],
    ['localhost:80', '"localhost" is no literal address (no name is looked up)'],
    ['example.com:80', '"example.com" is no literal address (no name is looked up)'],
    ['::1:80', 'an IPv6 address goes in brackets: [HOST]:PORT'],
    ['[1.2.3.4]:80', '"1.2.3.4" is no IPv6 address'],
    ['[::1]', 'no port: expected [IPv6]:PORT'],
    ['[fe80::1]', 'no port: expected [IPv6]:PORT'],
    ['080', 'port "080" has a leading zero: write it without'],
    ['127.0.0.1:0443', 'port "0443" has a leading zero: write it without'],
    ['[fe80::1]:8080', '"fe80::1" is link-local: it is bound only with an interface, which --listen does not take'],
    ['[FEBF::1]:8080', '"FEBF::1" is link-local: it is bound only with an interface, which --listen does not take'],
    ['[fe80::1%eth0]:8080', '"fe80::1%eth0" has a zone (%…), which --listen does not take'],
    ['[::ffff:127.0.0.1]:80', '"::ffff:127.0.0.1" is an IPv4 address in IPv6 form: write 127.0.0.1:PORT'],
    ['[::ffff:7f00:1]:80', '"::ffff:7f00:1" is an IPv4 address in IPv6 form: write 127.0.0.1:PORT'],
    ['[0:0:0:0:0:FFFF:7f00:1]:80', '"0:0:0:0:0:FFFF:7f00:1" is an IPv4 address in IPv6 form: write 127.0.0.1:PORT'],
    [
      '[fe80:0000::1]:8080',
      '"fe80:0000::1" is link-local: it is bound only with an interface, which --listen does not take',
    ],
    ['256.1.1.1:80', '"256.1.1.1" is no literal address (no name is looked up)'],
    ['=8080', `the name "" is not printable ASCII without spaces, ':', ',' or '=' (at most 255)`],
    ['a b=8080', `the name "a b" is not printable ASCII without spaces, ':', ',' or '=' (at most 255)`],
    ['a:b=8080', `the name "a:b" is not printable ASCII without spaces, ':', ',' or '=' (at most 255)`],
    [`${'x'.repeat(256)}=8080`, expect.stringMatching(/^the name "x+" is not printable ASCII/)],
  ])('%s is refused', (text, why) => {
    expect(parseListen(text)).toEqual(why);
  });

  it('a name is unique (LISTEN_FDNAMES tells the sockets apart)', () => {
    const read = (texts: string[]) =>
      texts.map((text) => parseListen(text) as Exclude<ReturnType<typeof parseListen>, string>);
    expect(duplicateName(read(['web=8080', 'admin=8081']))).toBeUndefined();
    expect(duplicateName(read(['8080', '127.0.0.1:8080']))).toBe('8080');
  });
});

describe('specsOf', () => {
  it('every interface: [::] with IPv4 too (IPV6_V6ONLY=0), then 0.0.0.0 where the kernel has no IPv6', () => {
    const specs = specsOf({ name: 'web', host: undefined, family: undefined, port: 8080 });
    expect(specs).toEqual([
      { family: 6, host: '::', port: 8080, dual: true },
      { family: 4, host: '0.0.0.0', port: 8080, dual: false },
    ]);
    expect(specs.map(shownSpec)).toEqual(['[::]:8080', '0.0.0.0:8080']);
  });

  it('a given address is that address alone; [::] given is dual-stack too, as Node binds it', () => {
    expect(specsOf({ name: 'a', host: '127.0.0.1', family: 4, port: 1 })).toEqual([
      { family: 4, host: '127.0.0.1', port: 1, dual: false },
    ]);
    expect(specsOf({ name: 'a', host: '::1', family: 6, port: 1 })).toEqual([
      { family: 6, host: '::1', port: 1, dual: false },
    ]);
    expect(specsOf({ name: 'a', host: '::', family: 6, port: 1 })).toEqual([
      { family: 6, host: '::', port: 1, dual: true },
    ]);
  });

  it('[::] however written is dual-stack: the address decides, never its text (issue 35, 5b)', () => {
    for (const host of ['0::0', '0:0:0:0:0:0:0:0', '::0'])
      expect(specsOf({ name: 'a', host, family: 6, port: 1 })).toEqual([{ family: 6, host, port: 1, dual: true }]);
    const given = parseListen('[0::0]:8080') as Exclude<ReturnType<typeof parseListen>, string>;
    expect(specsOf(given).map(shownSpec)).toEqual(['[::]:8080']);
  });
});
