import { afterEach, expect } from 'vitest';
import { killEverything } from './gsup.js';

// The one leak check of the e2e projects, registered before every file of them
// (vitest.config.ts, setupFiles): after each test everything it started is
// SIGKILLed, and a test that left any process of its tree behind fails. A
// file's own afterEach runs before this one (vitest runs after-hooks in
// reverse order), so what a file kills itself is gone by then.

const cleanups: Array<() => void> = [];

/** Runs after the check, once the test's processes are gone (a cgroup can only be removed empty). */
export function afterLeakCheck(cleanup: () => void): void {
  cleanups.push(cleanup);
}

afterEach(() => {
  try {
    expect(killEverything(), 'processes left behind').toEqual([]);
  } finally {
    for (const cleanup of cleanups.splice(0)) cleanup();
  }
});
