// Types for bench/lib/load.js (used by test/container/restarts.test.ts).
export interface KindCounts {
  attempts: number;
  answered: number;
  /** A whole answer with a status outside 2xx. */
  non2xx: number;
  refused: number;
  reset: number;
  lost: number;
  p50Ms?: number;
  p99Ms?: number;
  maxMs?: number;
  /** Answers by the pid that gave them. */
  pids: Record<string, number>;
}
export interface LoadResult {
  kinds: { one: KindCounts; keep: KindCounts };
  cpuMs: number;
  wallMs: number;
  loopLagP99Ms: number;
}
export declare function startLoad(options: {
  port: number;
  host?: string;
  one?: number;
  keep?: number;
}): Promise<{ stop(): Promise<LoadResult> }>;
