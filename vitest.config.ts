import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/helpers/temp-folders.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          setupFiles: ['test/helpers/temp-folders.ts', 'test/helpers/leaks.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          // Real processes and real signals: files run in parallel, tests in a file one by one.
          fileParallelism: true,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          // Floods of signals and of orphans load the machine: alone, after the rest,
          // so that they neither starve nor are starved by timing-sensitive tests.
          name: 'e2e-alone',
          include: ['test/e2e-alone/**/*.test.ts'],
          setupFiles: ['test/helpers/temp-folders.ts', 'test/helpers/leaks.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          fileParallelism: false,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          // A real runtime (podman): one container at a time, after the rest.
          name: 'container',
          include: ['test/container/**/*.test.ts'],
          setupFiles: ['test/helpers/temp-folders.ts'],
          testTimeout: 60_000,
          hookTimeout: 240_000,
          fileParallelism: false,
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
