// Types for bench/lib/table.js (read by test/unit/bench-restarts.test.ts).
import type { Budget } from '../budgets.js';

export interface TableRow {
  id: string;
  params?: Record<string, string | number>;
  result?: string;
  anchors?: string;
  skipped?: string;
  measured?: Record<string, number | undefined>;
}
export declare const HEADER: string[];
export declare function cells(row: TableRow): {
  figure: string;
  result: string;
  budget: string;
  verdict: string;
  anchors: string;
};
export declare function renderTable(rows: TableRow[]): string[];
export declare function budgetOfFigure(figure: string): Budget | undefined;
export declare function mergeRows(written: string[], rows: TableRow[]): string[];
