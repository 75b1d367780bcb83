// Types for bench/restarts.js (read by test/unit/bench-restarts.test.ts).
import type { LoadResult } from './lib/load.js';

export declare const SCENARIOS: Record<string, string>;
export type ScenarioResult =
  | { name: string; failed: string }
  | (LoadResult & {
      name: string;
      load1m: number;
      idle: number;
      crashes: Array<{ connections: number; requests: number }>;
      note?: string;
      events: string[];
    });
export interface Row {
  id: string;
  result?: string;
  anchors?: string;
  skipped?: string;
  measured?: Record<string, number>;
}
export declare function restartsTable(results: Record<string, ScenarioResult>): {
  caption: string;
  lines: string[];
  rows: Row[];
};
