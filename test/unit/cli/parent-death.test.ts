import { describe, expect, it } from 'vitest';
import { Logger } from '../../../src/output/log.js';
import { askForParentDeath } from '../../../src/cli/parent-death.js';
import type { SignalName } from '../../../src/platform/index.js';
import { FakePlatform } from '../../helpers/fake-platform.js';

/** askForParentDeath, the platform answering `why`, the parent now `ppidNow`: what it asked, received and said. */
function ask(why: string | undefined | 'absent', ppidNow: number) {
  const platform = new FakePlatform();
  const asked: number[] = [];
  const askParentDeathSignal = (signal: number) => (asked.push(signal), why);
  if (why !== 'absent') Object.assign(platform, { askParentDeathSignal });
  const lines: string[] = [];
  const received: SignalName[] = [];
  const logger = new Logger({ verbosity: 0, write: (line) => lines.push(line) });
  askForParentDeath(
    'SIGTERM',
    4242,
    platform,
    logger,
    (signal) => received.push(signal),
    () => ppidNow,
  );
  return { asked, received, lines };
}

describe('askForParentDeath (-p)', () => {
  it('asks the kernel for the signal by number; the same parent as at start: nothing received, nothing said', () => {
    expect(ask(undefined, 4242)).toEqual({ asked: [15], received: [], lines: [] });
  });

  it('a parent changed since gsup started (now 1 or a subreaper): the signal counts as received, said once', () => {
    const { received, lines } = ask(undefined, 1);
    expect(received).toEqual(['SIGTERM']);
    expect(lines).toEqual(["[gsup] gsup's parent (pid 4242) died before -p SIGTERM was asked for: SIGTERM received\n"]);
  });

  it('the kernel cannot be asked, or there is no such thing here: one warning, nothing received', () => {
    const failed = ask('koffi could not be loaded (GSUP_FFI=0)', 1);
    expect(failed.received).toEqual([]);
    const cannot = "[gsup] -p SIGTERM: gsup cannot ask for a signal on its parent's death:";
    expect(failed.lines).toEqual([`${cannot} koffi could not be loaded (GSUP_FFI=0)\n`]);
    const absent = ask('absent', 4242);
    expect(absent.lines).toEqual([`${cannot} not on ${process.platform} (Linux only)\n`]);
  });
});
