/**
 * Milliseconds on a monotonic clock (as performance.now(), from another
 * origin: only differences mean anything). `performance` is a lazy global
 * whose first use loads perf_hooks, ~2 ms: at start-up, or on a first forward.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
