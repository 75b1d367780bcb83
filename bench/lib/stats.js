// Statistics of timings.

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** Milliseconds since `started` (a process.hrtime.bigint()). */
export const since = (started) => Number(process.hrtime.bigint() - started) / 1e6;

/** Median of `runs` timings of `fn`, in ms. */
export function timed(fn, runs = 20) {
  const times = [];
  for (let index = 0; index < runs; index++) {
    const started = process.hrtime.bigint();
    fn();
    times.push(since(started));
  }
  return median(times);
}

/** The same for an async `fn`. */
export async function timedAsync(fn, runs = 20) {
  const times = [];
  for (let index = 0; index < runs; index++) {
    const started = process.hrtime.bigint();
    await fn();
    times.push(since(started));
  }
  return median(times);
}

export const ms = (value) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
export const mib = (value) => `${value.toFixed(1)} MiB`;
export const seconds = (valueMs) => `${(valueMs / 1000).toFixed(2)} s`;
