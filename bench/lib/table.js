// The table: rows in the budgets' order, written as markdown, to the terminal
// and between markers in docs/performance.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { BUDGETS, budget, budgetWords, figureWords, verdict } from '../budgets.js';

export const HEADER = ['| figure | gsup | budget | verdict | anchors |', '| --- | --- | --- | --- | --- |'];

/**
 * A row, as a figure reports it: `id` (its budget), `params` (filled into
 * its name), `result` and `anchors` (words), `measured` (the values its
 * budget compares), or `skipped` (why it was not measured).
 */
export function cells(row) {
  const entry = budget(row.id);
  return {
    figure: figureWords(entry, row.params),
    result: row.skipped ? `skipped: ${row.skipped}` : row.result,
    budget: budgetWords(entry),
    verdict: row.skipped ? '-' : verdict(entry, row.measured),
    anchors: row.anchors ?? '',
  };
}

export function renderTable(rows) {
  const order = (row) => BUDGETS.indexOf(budget(row.id));
  const sorted = [...rows].sort((a, b) => order(a) - order(b));
  return [
    ...HEADER,
    ...sorted.map((row) => {
      const { figure, result, budget: words, verdict: said, anchors } = cells(row);
      return `| ${figure} | ${result} | ${words} | ${said} | ${anchors} |`;
    }),
  ];
}

/** Where and on what: the line under the table. */
export const machine = () =>
  `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;

/** Where `<!-- bench:NAME -->` ends and `<!-- /bench:NAME -->` begins in `text`. */
export function markers(text, name) {
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no ${start} … ${end}`);
  return { from: from + start.length, to };
}

/** Replaces what stands between the markers NAME in `file` with `lines`. */
export function writeBetween(file, name, lines) {
  const text = readFileSync(file, 'utf8');
  const { from, to } = markers(text, name);
  writeFileSync(file, `${text.slice(0, from)}\n${lines.join('\n')}\n${text.slice(to)}`);
}

/** The budget a row of the written table stands for, by its figure cell ({name}: what the run filled in). */
export function budgetOfFigure(figure) {
  const escape = (words) => words.replace(/[.*+?^$()[\]{}|\\]/g, '\\$&');
  return BUDGETS.find((entry) =>
    new RegExp(
      `^${entry.figure
        .split(/\{\w+\}/)
        .map(escape)
        .join('.+')}$`,
    ).test(figure),
  );
}

/**
 * The written table's lines with the rows of some figures replaced by a partial run's (`npm run bench --
 * --only NAME --write-docs`): the other rows stay as the last full run wrote them, in the budgets' order.
 */
export function mergeRows(written, rows) {
  const fresh = new Set(rows.map((row) => row.id));
  const rendered = renderTable(rows).slice(HEADER.length);
  const kept = written
    .filter((line) => line.startsWith('|'))
    .slice(HEADER.length)
    .map((line) => ({ line, entry: budgetOfFigure(line.slice(2, -2).split(' | ')[0]) }))
    .filter(({ entry }) => entry && !fresh.has(entry.id));
  const all = [
    ...kept,
    ...rendered.map((line) => ({ line, entry: budgetOfFigure(line.slice(2, -2).split(' | ')[0]) })),
  ];
  // Stable: the rows of one figure (drain's chains) keep their order.
  const order = (item) => BUDGETS.indexOf(item.entry);
  return [...HEADER, ...all.sort((a, b) => order(a) - order(b)).map((item) => item.line)];
}
