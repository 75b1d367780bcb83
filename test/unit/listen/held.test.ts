import { describe, expect, it } from 'vitest';
import { HeldSockets } from '../../../src/engine/listen/held.js';
import { takeHanded } from '../../../src/engine/listen/handed.js';
import { handedCount } from '../../../src/engine/listen/wire.js';
import type { ListenAddress } from '../../../src/engine/listen/address.js';
import type { HeldSocketCalls, ListenSpec, Platform } from '../../../src/platform/index.js';
import { Logger } from '../../../src/output/log.js';

// The held sockets over fake system calls: the fallback to 0.0.0.0 (no IPv6), what cannot be had, the check
// after a run and before a spawn (a holder's shutdown() noticed, the socket bound again), the shutdown at the end.

/** System calls that answer as told: `refuse` maps an address (`[::]:80`) to the errno its bind meets. */
function fakeCalls() {
  let next = 10;
  const calls = {
    refuse: new Map<string, string>(),
    open: new Map<number, ListenSpec>(),
    /** fds a holder shut down (not listening any more). */
    notListening: new Set<number>(),
    shutDown: [] as number[],
    closed: [] as number[],
    queue: new Map<number, number>(),
    blocking: [] as number[],
    /** What each fd handed to gsup is (fds 3…): a listening socket's spec, or what it is instead. */
    handed: new Map<number, ListenSpec | string>(),
  };
  const key = (spec: ListenSpec) => (spec.family === 6 ? `[${spec.host}]:${spec.port}` : `${spec.host}:${spec.port}`);
  const api: HeldSocketCalls = {
    listen(spec) {
      const errno = calls.refuse.get(key(spec));
      if (errno) return { step: errno === 'EAFNOSUPPORT' ? 'socket' : 'bind', errno };
      const fd = next++;
      calls.open.set(fd, spec);
      return { fd, dev: 9, ino: 1000 + fd, backlog: 4096 };
    },
    handed(fd) {
      const spec = calls.handed.get(fd) ?? 'not open';
      if (typeof spec === 'string') return spec;
      calls.open.set(fd, spec);
      return { spec, socket: { fd, dev: 7, ino: 500 + fd, backlog: 128 } };
    },
    // The same address, as the bytes getsockname gives (not the text: `0::0` is `::`).
    listening: (fd, spec) => {
      const open = calls.open.get(fd);
      const bytes = (host: string) => new URL(`http://[${host.includes(':') ? host : `::ffff:${host}`}]`).host;
      const same =
        open && open.family === spec.family && open.port === spec.port && bytes(open.host) === bytes(spec.host);
      return Boolean(same) && !calls.notListening.has(fd);
    },
    queued: (fd) => calls.queue.get(fd) ?? 0,
    blocking: (fd) => void calls.blocking.push(fd),
    shutDown: (fd) => (calls.shutDown.push(fd), calls.open.delete(fd)),
    close: (fd) => (calls.closed.push(fd), calls.open.delete(fd)),
    pair: () => 'no pairs here',
    channel: () => {
      throw new Error('no channels here');
    },
    unprivilegedPortStart: () => 1024,
  };
  return { calls, platform: { sockets: api } as unknown as Platform };
}

const every = (port: number, name = String(port)): ListenAddress => ({
  name,
  host: undefined,
  family: undefined,
  port,
});
const at = (host: string, port: number, name = String(port)): ListenAddress => ({
  name,
  host,
  family: host.includes(':') ? 6 : 4,
  port,
});

function logged() {
  const lines: string[] = [];
  return { lines, logger: new Logger({ verbosity: 1, write: (line) => lines.push(line.trim()) }) };
}

describe('HeldSockets.bind', () => {
  it('binds each in order; the ids, fds, names and inodes a run is handed follow', () => {
    const { platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080, 'web'), at('127.0.0.1', 9000, 'admin')], platform) as HeldSockets;
    expect(held.names).toEqual(['web', 'admin']);
    expect(held.fds()).toEqual([10, 11]);
    expect(held.id()).toBe('9:1010@[::]:8080,9:1011@127.0.0.1:9000');
    expect([...held.inodes()]).toEqual([
      [1010, 'web'],
      [1011, 'admin'],
    ]);
    const { lines, logger } = logged();
    held.describe(logger);
    expect(lines).toEqual([
      '[gsup] holding web on [::]:8080 (backlog 4096)',
      '[gsup] holding admin on 127.0.0.1:9000 (backlog 4096)',
    ]);
  });

  it('PORT falls back to 0.0.0.0 only where the kernel has no IPv6 (EAFNOSUPPORT, EADDRNOTAVAIL)', () => {
    for (const errno of ['EAFNOSUPPORT', 'EADDRNOTAVAIL']) {
      const { calls, platform } = fakeCalls();
      calls.refuse.set('[::]:8080', errno);
      const held = HeldSockets.bind([every(8080)], platform) as HeldSockets;
      expect(held.id()).toBe('9:1010@0.0.0.0:8080');
    }
    // In use: no fallback (0.0.0.0 would expose only half of what was asked), one line.
    const { calls, platform } = fakeCalls();
    calls.refuse.set('[::]:8080', 'EADDRINUSE');
    expect(HeldSockets.bind([every(8080)], platform)).toBe(
      'cannot hold 8080 on [::]:8080 (--listen): the port is in use',
    );
  });

  it('what cannot be had is one line naming it; what was bound before it is let go', () => {
    const { calls, platform } = fakeCalls();
    calls.refuse.set('[::]:80', 'EACCES');
    calls.refuse.set('10.9.9.9:81', 'EADDRNOTAVAIL');
    calls.refuse.set('[::]:2000', 'EACCES');
    expect(HeldSockets.bind([every(8080), every(80)], platform)).toBe(
      'cannot hold 80 on [::]:80 (--listen): permission denied: ' +
        'ports below 1024 (ip_unprivileged_port_start) need root or CAP_NET_BIND_SERVICE',
    );
    expect(calls.closed).toEqual([10]);
    expect(HeldSockets.bind([at('10.9.9.9', 81)], platform)).toBe(
      'cannot hold 81 on 10.9.9.9:81 (--listen): no such address on this host',
    );
    expect(HeldSockets.bind([every(2000)], platform)).toBe(
      'cannot hold 2000 on [::]:2000 (--listen): permission denied',
    );
    expect(HeldSockets.bind([every(1)], {} as Platform)).toBe('--listen: gsup cannot hold sockets on this system');
  });
});

describe('HeldSockets: checked after each run and before each spawn', () => {
  it('still listening: nothing to say', () => {
    const { platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080)], platform) as HeldSockets;
    const { lines, logger } = logged();
    expect(held.check('after run 1', logger)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('shut down by a holder: bound again (a new fd and inode, handed to the next run), one warning naming the run', () => {
    const { calls, platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080, 'web')], platform) as HeldSockets;
    calls.notListening.add(10);
    const { lines, logger } = logged();
    expect(held.check('after run 2', logger)).toEqual([]);
    expect(lines).toEqual(['[gsup] the held socket web ([::]:8080) was no longer listening after run 2: bound again']);
    expect(calls.closed).toEqual([10]);
    expect(held.fds()).toEqual([11]);
    expect(held.id()).toBe('9:1011@[::]:8080');
    expect(held.check('before run 3', logger)).toEqual([]);
    expect(lines).toHaveLength(1);
  });

  it('its port taken meanwhile: lost (the machine gives restarts up), said once', () => {
    const { calls, platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080, 'web'), at('127.0.0.1', 9000, 'admin')], platform) as HeldSockets;
    calls.notListening.add(10);
    calls.refuse.set('[::]:8080', 'EADDRINUSE');
    const { lines, logger } = logged();
    expect(held.check('after run 1', logger)).toEqual(['web']);
    expect(lines).toEqual([
      '[gsup] the held socket web ([::]:8080) was no longer listening after run 1, and cannot be bound again: ' +
        'bind failed (EADDRINUSE)',
    ]);
    expect(held.fds()).toEqual([undefined, 11]);
    expect(held.check('before run 2', logger)).toEqual(['web']);
    expect(lines).toHaveLength(1);
  });
});

describe('HeldSockets: before a restart', () => {
  it('each socket it still holds made blocking again, as the first run got it', () => {
    const { calls, platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080, 'web'), every(9090, 'admin')], platform) as HeldSockets;
    held.shut(['admin']);
    held.fresh();
    expect(calls.blocking).toEqual([10]);
  });
});

describe('HeldSockets: the end and /metrics', () => {
  it('shut down by name, once each; a shut socket is checked no more, and handed to no run', () => {
    const { calls, platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080, 'web'), every(9090, 'admin')], platform) as HeldSockets;
    held.shut(['web']);
    held.shut(['web']);
    expect(calls.shutDown).toEqual([10]);
    expect(held.fds()).toEqual([undefined, 11]);
    expect(held.check('after run 1', logged().logger)).toEqual([]);
    held.shut(['web', 'admin']);
    expect(calls.shutDown).toEqual([10, 11]);
  });

  it('the queue of each socket gsup still holds, by name', () => {
    const { calls, platform } = fakeCalls();
    const held = HeldSockets.bind([every(8080, 'web'), every(9090, 'admin')], platform) as HeldSockets;
    calls.queue.set(10, 5);
    expect(held.queue()).toEqual([
      ['web', 5],
      ['admin', 0],
    ]);
    held.shut(['admin']);
    expect(held.queue()).toEqual([['web', 5]]);
  });
});

describe('sockets handed to gsup (LISTEN_FDS with its own LISTEN_PID)', () => {
  const v6 = (port: number, dual = true): ListenSpec => ({ family: 6, host: '::', port, dual });
  const v4 = (host: string, port: number): ListenSpec => ({ family: 4, host, port, dual: false });
  const handing = (count: number, names?: string, pid = '42') => ({
    LISTEN_FDS: String(count),
    LISTEN_PID: pid,
    ...(names !== undefined && { LISTEN_FDNAMES: names }),
  });

  it("only to gsup's own pid, and a count that is a count", () => {
    expect(handedCount(handing(2), 42)).toBe(2);
    expect(handedCount(handing(2, undefined, '41'), 42)).toBe(0);
    expect(handedCount({ LISTEN_FDS: '2' }, 42)).toBe(0);
    expect(handedCount({ LISTEN_FDS: 'x', LISTEN_PID: '42' }, 42)).toBe(0);
    expect(handedCount({ LISTEN_FDS: '99999', LISTEN_PID: '42' }, 42)).toBe(0);
    // Not gsup's: no system call at all (the fds are not looked at).
    const { calls, platform } = fakeCalls();
    calls.handed.set(3, v6(8080));
    const taken = takeHanded([every(8080)], platform, logged().logger, handing(1, undefined, '41'), 42);
    expect(taken).toEqual(new Map());
    expect(calls.closed).toEqual([]);
  });

  it('by name, then by address; a held socket made of each, its fd and inode in GSUP_LISTEN_ID; the rest closed', () => {
    const { calls, platform } = fakeCalls();
    calls.handed.set(3, v4('127.0.0.1', 9000));
    calls.handed.set(4, v6(8080));
    calls.handed.set(5, v4('0.0.0.0', 7000));
    calls.handed.set(6, 'no socket');
    const addresses = [every(8080, 'web'), at('127.0.0.1', 9000, 'admin'), every(6000)];
    const { lines, logger } = logged();
    const taken = takeHanded(addresses, platform, logger, handing(4, 'admin:x:y:z'), 42);
    expect(taken).toBeInstanceOf(Map);
    const held = HeldSockets.bind(addresses, platform, taken as Map<number, never>) as HeldSockets;
    // admin by its name (fd 3), web by its address (fd 4), 6000 bound anew (fd 10).
    expect(held.fds()).toEqual([4, 3, 10]);
    expect(held.id()).toBe('7:504@[::]:8080,7:503@127.0.0.1:9000,9:1010@[::]:6000');
    expect(lines).toEqual([
      '[gsup] LISTEN_FDS: fd 6 is no socket: not used',
      "[gsup] LISTEN_FDS: the socket at fd 5 (y, 0.0.0.0:7000) is no --listen's: closed",
    ]);
    expect(calls.closed).toEqual([5]);
    lines.length = 0;
    held.describe(logger);
    expect(lines[0]).toBe('[gsup] holding web on [::]:8080 (backlog 128, handed to gsup at fd 4)');
    // At the end a handed socket is closed, never shut down: it listens on for whoever handed it. Said so.
    lines.length = 0;
    held.shut(['web', 'admin', '6000'], { reason: 'no run follows', logger });
    expect(calls.shutDown).toEqual([10]);
    expect(calls.closed).toEqual([5, 4, 3]);
    expect(lines).toEqual([
      '[gsup] held socket(s) 6000 shut down (no run follows): new connections are refused',
      '[gsup] held socket(s) web, admin closed (no run follows): handed to gsup, they stay listening for whoever handed them',
    ]);
  });

  it('an address compared as bytes, with its dual stack: `[::]` IPv6-only is not PORT; 0.0.0.0 is (no IPv6)', () => {
    const { calls, platform } = fakeCalls();
    calls.handed.set(3, v6(8080, false));
    calls.handed.set(4, { family: 6, host: '::1', port: 9090, dual: false });
    calls.handed.set(5, v4('0.0.0.0', 7070));
    const addresses = [every(8080), at('0:0::1', 9090), every(7070)];
    const taken = takeHanded(addresses, platform, logged().logger, handing(3), 42) as Map<number, unknown>;
    expect([...taken.keys()]).toEqual([1, 2]);
    expect(calls.closed).toEqual([3]);
  });

  it('named as a --listen but listening elsewhere: one line naming both (a usage error)', () => {
    const { calls, platform } = fakeCalls();
    calls.handed.set(3, v4('0.0.0.0', 8081));
    expect(takeHanded([every(8080, 'web')], platform, logged().logger, handing(1, 'web'), 42)).toBe(
      'the socket handed to gsup as web (fd 3) listens on 0.0.0.0:8081, not on [::]:8080 or 0.0.0.0:8080 (--listen)',
    );
  });

  it('handed to a gsup without --listen: each closed, one line each', () => {
    const { calls, platform } = fakeCalls();
    calls.handed.set(3, v6(8080));
    const { lines, logger } = logged();
    expect(takeHanded([], platform, logger, handing(1), 42)).toEqual(new Map());
    expect(calls.closed).toEqual([3]);
    expect(lines).toEqual(["[gsup] LISTEN_FDS: the socket at fd 3 ([::]:8080) is no --listen's: closed"]);
  });
});
