import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUDGETS, budgetWords } from '../../bench/budgets.js';
import { ROOT } from '../helpers/gsup.js';

// docs/performance.md's table is written by `npm run bench -- --write-docs`; its
// layout and budget column are bench/budgets.js, and must not drift from it.
describe('docs/performance.md: the benchmark table', () => {
  const text = readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8');
  const region = /<!-- bench:table -->\n([\s\S]*?)<!-- \/bench:table -->/.exec(text)?.[1] ?? '';
  const lines = region.split('\n').filter((line) => line.startsWith('|'));
  const rows = lines.slice(2).map((line) => line.slice(2, -2).split(' | '));
  // A figure's {name} stands for what the run fills in (a count, a chain).
  const escape = (words: string) => words.replace(/[.*+?^$()[\]{}|\\]/g, '\\$&');
  const pattern = (figure: string) =>
    new RegExp(
      `^${figure
        .split(/\{\w+\}/)
        .map(escape)
        .join('.+')}$`,
    );

  it('stands between its markers, with the header the bench writes', () => {
    expect(lines.slice(0, 2)).toEqual([
      '| figure | gsup | budget | verdict | anchors |',
      '| --- | --- | --- | --- | --- |',
    ]);
    expect(rows.every((cells) => cells.length === 5)).toBe(true);
  });

  it("has a row for every budget, in bench/budgets.js's order, each with that budget's words", () => {
    const ids = rows.map(([figure, , budget]) => {
      const entry = BUDGETS.find((candidate) => pattern(candidate.figure).test(figure));
      if (!entry) throw new Error(`no budget in bench/budgets.js names the row "${figure}"`);
      expect(budget, figure).toBe(budgetWords(entry));
      return entry.id;
    });
    // A figure of several rows (drain: one per chain) counts once.
    expect(ids.filter((id, index) => id !== ids[index - 1])).toEqual(BUDGETS.map((entry) => entry.id));
  });

  it('gives a verdict only where there is a budget', () => {
    for (const [figure, result, budget, verdict] of rows) {
      const measured = budget !== 'none (reported)' && !result.startsWith('skipped');
      expect(verdict, figure).toMatch(measured ? /^(ok|MISSED)$/ : /^-$/);
    }
  });
});
