import { describe, expect, it } from 'vitest';
import { listenIdEntry, parseListenIds } from '../../../src/engine/listen/wire.js';
import { mismatch, readHeld, type Fstat } from '../../../src/listen-preload/held.js';

const ENV = {
  LISTEN_FDS: '2',
  LISTEN_FDNAMES: 'web:admin',
  LISTEN_PID: '10',
  GSUP_LISTEN_ID: '9:1001@[::]:8080,9:1002@127.0.0.1:9000',
  GSUP_REPORT_FD: '5',
};

describe('what a process was handed', () => {
  it('GSUP_LISTEN_ID: DEV:INO@ADDRESS, one per fd, in fd order', () => {
    const ids = [
      { dev: '9', ino: '1001', address: '[::]:8080' },
      { dev: '9', ino: '1002', address: '127.0.0.1:9000' },
    ];
    expect(ids.map(listenIdEntry).join(',')).toBe(ENV.GSUP_LISTEN_ID);
    expect(parseListenIds(ENV.GSUP_LISTEN_ID)).toEqual(ids);
    expect(parseListenIds('9:1001@[::]:8080,x')).toBeUndefined();
  });

  it('reads the sockets at 3… with their names, and the report channel after them', () => {
    expect(readHeld(ENV)).toEqual({
      sockets: [
        { fd: 3, dev: '9', ino: '1001', address: '[::]:8080', port: 8080, name: 'web' },
        { fd: 4, dev: '9', ino: '1002', address: '127.0.0.1:9000', port: 9000, name: 'admin' },
      ],
      reportFd: 5,
    });
    const { LISTEN_FDNAMES: _, GSUP_REPORT_FD: __, ...bare } = ENV;
    const read = readHeld(bare);
    expect(read).toMatchObject({ sockets: [{ name: '8080' }, { name: '9000' }] });
    expect(read).not.toHaveProperty('reportFd');
  });

  it("names nothing without GSUP_LISTEN_ID (LISTEN_FDS alone is somebody else's: systemd's)", () => {
    expect(readHeld({ LISTEN_FDS: '1', LISTEN_PID: '10' })).toBeUndefined();
  });

  it('says why when the variables do not agree', () => {
    expect(readHeld({ ...ENV, LISTEN_FDS: '1' })).toMatch(/does not match LISTEN_FDS=1/);
    expect(readHeld({ ...ENV, GSUP_LISTEN_ID: '9:1@somewhere,9:2@[::]:1' })).toMatch(/no address in somewhere/);
    for (const port of ['0', '65536', '080', '', '8e1', '0x50'])
      expect(readHeld({ ...ENV, GSUP_LISTEN_ID: `9:1@[::]:${port},9:2@[::]:1` })).toMatch(/no address in \[::\]:/);
    expect(readHeld({ ...ENV, GSUP_REPORT_FD: '7' })).toMatch(/GSUP_REPORT_FD=7 is not fd 5/);
  });

  it('trusts the fds only when each one is the socket its entry names', () => {
    const held = readHeld(ENV);
    if (typeof held !== 'object') throw new Error('not read');
    const table = new Map([
      [3, { dev: '9', ino: '1001', socket: true }],
      [4, { dev: '9', ino: '1002', socket: true }],
      [5, { dev: '9', ino: '77', socket: true }],
    ]);
    const fstat: Fstat = (fd) => table.get(fd);
    expect(mismatch(held, fstat)).toBeUndefined();
    table.set(4, { dev: '16', ino: '1038', socket: false }); // an epoll fd where Node opened one
    expect(mismatch(held, fstat)).toBe('fd 4 is no socket (16:1038, not 9:1002, 127.0.0.1:9000)');
    table.set(4, { dev: '9', ino: '1003', socket: true });
    expect(mismatch(held, fstat)).toMatch(/^fd 4 is another socket/);
    table.delete(3);
    expect(mismatch(held, fstat)).toBe('fd 3 is not open');
    table.set(3, { dev: '9', ino: '1001', socket: true }).set(4, { dev: '9', ino: '1002', socket: true });
    table.set(5, { dev: '8', ino: '1', socket: false });
    expect(mismatch(held, fstat)).toBe('fd 5 is no socket');
  });
});
