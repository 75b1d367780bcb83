// Types for bench/quotes.js (read by test/unit/doc-figures.test.ts).
export interface Run {
  startup: { ratio: number; tiniMs: number; dumbInitMs: number };
  preload: { ratio: number };
  /** tini's and dumb-init's: undefined in a run from before they were measured. */
  idle: Record<'gsup' | 'tini' | 'dumb-init', { rss: number | undefined; private: number | undefined }>;
  stopPeak: number;
  tsxLost: Record<'gsup' | 'tini' | 'dumb-init', number>;
  flood: [number, number];
  /** The restarts figure, per scenario of bench/restarts.js, both client kinds summed (none in an older run). */
  restarts: Record<string, Counts & { held: number | undefined; kinds: Partial<Record<'one' | 'keep', Counts>> }>;
  /** Each undefined in a run from before it. */
  reloadP99: number | undefined;
  latency: { ratio: number | undefined };
  listen: { startupMs: number | undefined; latencyRatio: number | undefined };
}
export interface Counts {
  refused: number;
  reset: number;
  lost: number;
  non2xx: number;
}
export interface Found {
  site: { file: string; text: string };
  start: number;
  end: number;
  text: string;
  quotes: Array<{ name: string; start: number; end: number; words: string }>;
}
export declare const QUOTED_FILES: string[];
export declare const SITES: Array<{ file: string; text: string }>;
export declare const OTHER_FIGURES: Array<{ file: string; text: string; why: string }>;
export declare function otherFiguresIn(file: string, text: string): Array<[number, number]>;
export declare function quotesIn(file: string, text: string): Found[];
export declare function misquoted(
  file: string,
  text: string,
  run: Run,
): Array<{ file: string; reads: string; should: string }>;
export declare function unsourcedFigures(file: string, text: string): Array<{ figure: string; line: number }>;
export declare function quoteWords(run: Run): Record<string, string>;
export declare function rewriteQuotes(file: string, text: string, run: Run): string;
export declare function lastRun(markdown: string): Run;
