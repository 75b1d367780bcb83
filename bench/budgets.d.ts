// Types for bench/budgets.js (read by test/unit/bench-docs.test.ts).
export interface Check {
  words: string;
  pass(measured: Record<string, number | undefined>): boolean;
}
export interface Budget {
  id: string;
  figure: string;
  checks: Check[];
}
export declare const BUDGETS: Budget[];
export declare function budget(id: string): Budget;
export declare function budgetWords(entry: Budget): string;
export declare function figureWords(entry: Budget, params?: Record<string, string | number>): string;
export declare function verdict(entry: Budget, measured?: Record<string, number | undefined>): string;
