import { closeSync, readSync, writeSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openChannel } from '../../../../../src/platform/linux/sockets/channel.js';
import { heldSocketCalls as calls } from '../../../../../src/platform/linux/sockets/sockets.js';
import { takeOwnSigpipe } from '../../../../../src/platform/sigpipe.js';

// A run's report channel as gsup reads it: Node's pipe handle without a net.Socket, and a net.Socket where that
// handle is not to be had; both read the run's words in the loop, write gsup's, and say the end once.

const linux = process.platform === 'linux';
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Resolves once `check` holds, polled each turn of the loop (at most 5 s). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.skipIf(!linux).each([
  ['the pipe handle', true],
  ['a net.Socket', false],
])('the report channel, read by %s', (_name, handle) => {
  function opened() {
    const pair = calls.pair();
    if (typeof pair === 'string') throw new Error(pair);
    const [near, far] = pair;
    const heard: string[] = [];
    let ends = 0;
    const channel = openChannel(
      near,
      (text) => heard.push(text),
      () => ends++,
      handle,
    );
    let farOpen = true;
    const closeFar = () => {
      if (farOpen) closeSync(far);
      farOpen = false;
    };
    cleanups.push(() => (channel.close(), closeFar()));
    return { near, far, heard, ends: () => ends, channel, closeFar };
  }

  it("hears the run's words as they come, a character split over two writes whole", async () => {
    const { far, heard } = opened();
    writeSync(far, 'listen web 12\n');
    await until(() => heard.join('') === 'listen web 12\n', 'the first word');
    const snowman = Buffer.from('☃\n');
    writeSync(far, snowman.subarray(0, 1));
    // The pipe handle's decoder hands on '' for the lone byte (then it was read alone); a net.Socket's says
    // nothing of it: a few turns of the loop give it the time to read it alone.
    if (handle) await until(() => heard.length === 2, 'a read of the first byte');
    else await new Promise((resolve) => setTimeout(resolve, 20));
    writeSync(far, snowman.subarray(1));
    await until(() => heard.join('').length > 'listen web 12\n'.length, 'the rest');
    expect(heard.join('')).toBe('listen web 12\n☃\n');
  });

  it("writes gsup's word to the run at once", () => {
    const { far, channel } = opened();
    channel.write('drain\n');
    const buffer = Buffer.alloc(16);
    expect(buffer.toString('utf8', 0, readSync(far, buffer))).toBe('drain\n');
  });

  it('says its end once when the run lets go of the far end; nothing after close()', async () => {
    const first = opened();
    first.closeFar();
    await until(() => first.ends() > 0, 'the end');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(first.ends()).toBe(1);
    // Closed by gsup: no end is said, and a word written now goes nowhere (no throw).
    const second = opened();
    second.channel.close();
    second.channel.write('drain\n');
    second.closeFar();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second.ends()).toBe(0);
  });

  it("a word to a run that let go: no throw, and the kernel's SIGPIPE for it counted as gsup's own", async () => {
    while (takeOwnSigpipe());
    const { channel, closeFar, ends } = opened();
    closeFar();
    channel.write('drain\n');
    await until(() => ends() > 0, 'the end');
    expect(takeOwnSigpipe()).toBe(true);
    expect(takeOwnSigpipe()).toBe(false);
  });

  // The pipe handle closes the fd at once, and the next socketpair takes its number again.
  it.skipIf(!handle)('a word after close() is not written to whatever has its fd number now', () => {
    const old = opened();
    old.channel.close();
    const pair = calls.pair();
    if (typeof pair === 'string') throw new Error(pair);
    cleanups.push(() => pair.forEach((fd) => calls.close(fd)));
    expect(pair).toContain(old.near);
    old.channel.write('drain\n');
    // Whichever end now has the old number, what its peer reads is only what is written here after.
    for (const [from, to] of [pair, [...pair].reverse()]) {
      writeSync(from, 'mark\n');
      const buffer = Buffer.alloc(32);
      expect(buffer.toString('utf8', 0, readSync(to, buffer))).toBe('mark\n');
    }
  });
});
