// The figures other docs quote (start-up, memory, requests lost, a flood),
// each from one source: the last full run, as docs/performance.md records it
// (its tables, written by `npm run bench -- --write-docs`, which then
// rewrites these quotes too; `node bench/quotes.js` rewrites them alone).
// test/unit/doc-figures.test.ts holds every quote to that run, and fails on
// a figure in these files that no site accounts for.
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BUDGETS } from './budgets.js';
import { SCENARIOS } from './restarts.js';

/** The files whose figures are quoted from the run (docs/performance.md is the run itself). */
export const QUOTED_FILES = ['README.md', 'docs/comparison.md', 'docs/limits.md'];

// How each quote is written: what it matches in a doc, and its words from a value.
const round = (value, decimals) => Number(value.toFixed(decimals)).toString();
const KINDS = {
  ratio: { pattern: String.raw`[\d.]+×`, words: (value) => `${round(value, 1)}×` },
  ms: { pattern: String.raw`[\d.]+\s+ms`, words: (value) => `${round(value, value < 1 ? 1 : 0)} ms` },
  mib: { pattern: String.raw`[\d.]+\s+MiB`, words: (value) => `${round(value, value < 10 ? 1 : 0)} MiB` },
  count: { pattern: String.raw`\d+`, words: (value) => String(value) },
  ofCount: { pattern: String.raw`\d+\s+of\s+\d+`, words: ([got, of]) => `${got} of ${of}` },
  /** refused / reset / lost */
  failures: {
    pattern: String.raw`\d+\s+/\s+\d+\s+/\s+\d+`,
    words: ({ refused, reset, lost }) => `${refused} / ${reset} / ${lost}`,
  },
};

// Every quote: its kind, and where in the run its value is.
const QUOTES = {
  gsupStartup: ['ratio', (run) => run.startup.ratio],
  tiniStartup: ['ms', (run) => run.startup.tiniMs],
  dumbInitStartup: ['ms', (run) => run.startup.dumbInitMs],
  preloadStartup: ['ratio', (run) => run.preload.ratio],
  gsupResident: ['mib', (run) => run.idle.gsup.rss],
  gsupPrivate: ['mib', (run) => run.idle.gsup.private],
  tiniResident: ['mib', (run) => run.idle.tini.rss],
  tiniPrivate: ['mib', (run) => run.idle.tini.private],
  dumbInitResident: ['mib', (run) => run.idle['dumb-init'].rss],
  dumbInitPrivate: ['mib', (run) => run.idle['dumb-init'].private],
  gsupStopPeak: ['mib', (run) => run.stopPeak],
  gsupTsxLost: ['count', (run) => run.tsxLost.gsup],
  tiniTsxLost: ['count', (run) => run.tsxLost.tini],
  dumbInitTsxLost: ['count', (run) => run.tsxLost['dumb-init']],
  gsupFloodStops: ['ofCount', (run) => run.flood],
  // The restarts figure (bench/restarts.js): both client kinds summed; undefined in a run from before it.
  gsupTodayRefused: ['count', (run) => run.restarts?.today?.refused],
  gsupListenRefused: ['count', (run) => run.restarts?.listen?.refused],
  pm2ForkRefused: ['count', (run) => run.restarts?.['pm2-fork']?.refused],
  gsupReloadFailures: ['failures', (run) => run.restarts?.reload],
  pm2ClusterReloadFailures: ['failures', (run) => run.restarts?.['pm2-cluster']],
};

/**
 * Where the docs quote them, each found exactly once in its file: text with
 * `{quote}` for each figure and spaces standing for any white space (a line
 * may wrap anywhere); `[[A||B]]` reads A when the run has every figure A
 * quotes, else B (a figure an older run did not measure).
 */
const TINI_MEMORY = '[[~{tiniResident} (~{tiniPrivate})||not in the last run]]';
const DUMB_INIT_MEMORY = '[[~{dumbInitResident} (~{dumbInitPrivate})||not in the last run]]';
export const SITES = [
  {
    file: 'README.md',
    text:
      '| start-up; memory idle: resident (private) | ~{gsupStartup} `node -e 0`; ~{gsupResident} (~{gsupPrivate}) ' +
      `| ~{tiniStartup}; ${TINI_MEMORY} | ~{dumbInitStartup}; ${DUMB_INIT_MEMORY} |`,
  },
  {
    file: 'README.md',
    text:
      '| requests lost (of 20 in flight) when an `npx tsx` app is stopped under load (measured) ' +
      '| {gsupTsxLost} | {tiniTsxLost} | {dumbInitTsxLost} |',
  },
  {
    file: 'docs/comparison.md',
    text: '| 30,000 signals, then SIGTERM (measured, 20 tries) | stops {gsupFloodStops} |',
  },
  {
    file: 'docs/comparison.md',
    text:
      '| `npx tsx` app in a container, stopped under load: requests lost of 20 in flight (measured) ' +
      '| {gsupTsxLost} | {tiniTsxLost} | {dumbInitTsxLost} |',
  },
  {
    file: 'docs/comparison.md',
    text: '| start-up | ~{gsupStartup} `node -e 0` (a Node process: tens of ms) | ~{tiniStartup} | ~{dumbInitStartup} |',
  },
  {
    file: 'docs/comparison.md',
    text:
      '| memory, idle: resident (private) ' +
      "| ~{gsupResident} (~{gsupPrivate}: the node binary's pages are shared with a Node app) " +
      `| ${TINI_MEMORY} | ${DUMB_INIT_MEMORY} |`,
  },
  {
    file: 'docs/limits.md',
    text:
      'it starts in ~{gsupStartup} the time of `node -e 0` (tens of ms) and takes ~{gsupResident} resident, ' +
      '~{gsupPrivate} of it private, where tini takes ~{tiniStartup}' +
      '[[ and ~{tiniResident} (~{tiniPrivate} private)||]].',
  },
  { file: 'docs/limits.md', text: '(a 1,000-process stop: ~{gsupStopPeak} resident at its peak)' },
  { file: 'docs/limits.md', text: 'with a preload, about {preloadStartup} `node -e 0` with the same preload' },
  {
    file: 'README.md',
    text:
      '| connections refused while a crashed app restarts, under load (measured: 20 clients, 2 crashes) ' +
      '| [[{gsupListenRefused} with `--listen` ({gsupTodayRefused} without)||not in the last run]] | no restarts ' +
      '| no restarts | [[{pm2ForkRefused} (fork mode)||not in the last run]] |',
  },
  {
    file: 'README.md',
    text:
      '| a reload under load: refused / reset / lost (measured: 20 clients, 3 reloads) ' +
      '| [[{gsupReloadFailures} (`--reload-signal`)||not in the last run]] | no | no ' +
      '| [[{pm2ClusterReloadFailures} (cluster mode, `pm2 reload`)||not in the last run]] |',
  },
  {
    file: 'docs/comparison.md',
    text:
      '| connections refused while a crashed app restarts, under load (measured: 20 clients, 2 crashes in about 4 s, ' +
      '`--restart-delay 100ms`) | [[{gsupListenRefused} with `--listen` ({gsupTodayRefused} without: the port is ' +
      'closed until the next run listens)||not in the last run]] | no restarts | no restarts ' +
      '| [[{pm2ForkRefused} (fork mode: each run listens itself)||not in the last run]] |',
  },
  {
    file: 'docs/comparison.md',
    text:
      '| a reload (a new release) under load: refused / reset / lost (measured: 20 clients, ' +
      '3 reloads) | [[{gsupReloadFailures} (`--reload-signal`: the new run beside the old)||not in the last run]] ' +
      '| no | no | [[{pm2ClusterReloadFailures} (cluster mode, `pm2 reload`; fork mode restarts)||not in the last ' +
      'run]] |',
  },
];

// A figure in a quoted file: a ratio, memory, milliseconds, requests lost. Each must be a site's.
const FIGURE = /\d[\d.,]*(?:–\d[\d.,]*)?\s*(?:×|[KMG]iB)|\d[\d.]*\s+ms\b|\d+\s+lost\b/g;

const escape = (text) => text.replace(/[.*+?^$()[\]{}|\\]/g, '\\$&');

/** A template as parts: text, { quote }, or { measured, otherwise } (each parts again). */
function parse(template) {
  const parts = [];
  for (const piece of template.split(/(\[\[.*?\]\]|\{\w+\})/)) {
    const choice = /^\[\[(.*)\|\|(.*)\]\]$/.exec(piece);
    const quote = /^\{(\w+)\}$/.exec(piece)?.[1];
    if (choice) parts.push({ measured: parse(choice[1]), otherwise: parse(choice[2]) });
    else if (quote) {
      if (!QUOTES[quote]) throw new Error(`bench/quotes.js: no quote ${quote}`);
      parts.push({ quote });
    } else if (piece !== '') parts.push(piece);
  }
  return parts;
}

const namesIn = (parts) =>
  parts.flatMap((part) =>
    typeof part === 'string' ? [] : part.quote ? [part.quote] : [...namesIn(part.measured), ...namesIn(part.otherwise)],
  );

/** The regular expression of parts: each quote a named group of its kind; a choice matches either side. */
function source(parts) {
  return parts
    .map((part) => {
      if (typeof part === 'string') return escape(part).replace(/\s+/g, String.raw`\s+`);
      if (part.quote) return `(?<${part.quote}>${KINDS[QUOTES[part.quote][0]].pattern})`;
      return `(?:${source(part.measured)}|${source(part.otherwise)})`;
    })
    .join('');
}

/** The text of parts with the run's words, and the quotes it used. */
function render(parts, words) {
  let text = '';
  const used = [];
  for (const part of parts) {
    if (typeof part === 'string') text += part;
    else if (part.quote) {
      text += words[part.quote];
      used.push(part.quote);
    } else {
      const measured = namesIn(part.measured).every((name) => words[name] !== undefined);
      const inner = render(measured ? part.measured : part.otherwise, words);
      text += inner.text;
      used.push(...inner.used);
    }
  }
  return { text, used };
}

/**
 * Every site in a file's text: { site, start, end, text, quotes: [{ name, start, end, words }] };
 * throws when a site is not there exactly once.
 */
export function quotesIn(file, text) {
  return SITES.filter((site) => site.file === file).map((site) => {
    const matches = [...text.matchAll(new RegExp(source(parse(site.text)), 'dg'))];
    if (matches.length !== 1)
      throw new Error(`${file}: ${matches.length === 0 ? 'no' : matches.length} place(s) reading "${site.text}"`);
    const [match] = matches;
    const quotes = Object.entries(match.indices.groups ?? {})
      .filter(([, span]) => span !== undefined)
      .map(([name, [start, end]]) => ({ name, start, end, words: text.slice(start, end) }));
    return { site, start: match.index, end: match.index + match[0].length, text: match[0], quotes };
  });
}

const plain = (text) => text.replace(/\s+/g, ' ');

/** Each site of a file that does not read as the run says: { file, reads, should }. */
export function misquoted(file, text, run) {
  const words = quoteWords(run);
  return quotesIn(file, text)
    .map((found) => ({ file, reads: plain(found.text), should: render(parse(found.site.text), words).text }))
    .filter((each) => each.reads !== each.should);
}

/** Figures in a file's text (outside code) that no site quotes: { figure, line }. */
export function unsourcedFigures(file, text) {
  // Code (fenced or inline) is blanked, keeping every offset: `500ms` there is an example, not a figure.
  const prose = text.replace(/```[\s\S]*?```|`[^`\n]*`/g, (code) => code.replace(/[^\n]/g, ' '));
  const quoted = quotesIn(file, text).flatMap((found) => found.quotes);
  return [...prose.matchAll(FIGURE)]
    .filter((match) => !quoted.some((quote) => match.index >= quote.start && match.index < quote.end))
    .map((match) => ({ figure: match[0], line: text.slice(0, match.index).split('\n').length }));
}

/** The words of every quote the run has (lastRun); a figure it did not measure has none. */
export function quoteWords(run) {
  const words = {};
  for (const [name, [kind, value]] of Object.entries(QUOTES)) {
    const measured = value(run);
    if (measured !== undefined) words[name] = KINDS[kind].words(measured);
  }
  return words;
}

/**
 * A file's text with every site as the run says: the figures replaced where
 * they stand (the lines kept as they wrap), or the whole site rewritten where
 * the run has figures the text lacks, or lacks figures it has.
 */
export function rewriteQuotes(file, text, run) {
  const words = quoteWords(run);
  let result = text;
  for (const found of quotesIn(file, text).sort((a, b) => b.start - a.start)) {
    const should = render(parse(found.site.text), words);
    const same = should.used.length === found.quotes.length && found.quotes.every((q) => should.used.includes(q.name));
    if (!same) {
      result = `${result.slice(0, found.start)}${should.text}${result.slice(found.end)}`;
      continue;
    }
    for (const quote of [...found.quotes].sort((a, b) => b.start - a.start))
      result = `${result.slice(0, quote.start)}${words[quote.name]}${result.slice(quote.end)}`;
  }
  return result;
}

/** The rows of the table between `<!-- bench:NAME -->` markers, as arrays of cells (the header's first). */
function tableRows(markdown, name) {
  const region = new RegExp(`<!-- bench:${name} -->\\n([\\s\\S]*?)<!-- /bench:${name} -->`).exec(markdown)?.[1];
  if (!region) throw new Error(`docs/performance.md has no bench:${name} table`);
  const lines = region.split('\n').filter((line) => line.startsWith('|'));
  return lines.filter((_, index) => index !== 1).map((line) => line.slice(2, -2).split(' | '));
}

/** A number out of a cell, or a clear error naming what the run lacks. */
function read(cell, pattern, what) {
  const match = pattern.exec(cell ?? '');
  if (!match) throw new Error(`the last run (docs/performance.md) has no ${what}: run npm run bench -- --write-docs`);
  return match.slice(1).map(Number);
}

/** The last full run's figures, read from docs/performance.md's tables. */
export function lastRun(markdown) {
  const [, ...rows] = tableRows(markdown, 'table');
  const figure = (id) => {
    const entry = BUDGETS.find((candidate) => candidate.id === id);
    const pattern = new RegExp(
      `^${entry.figure
        .split(/\{\w+\}/)
        .map(escape)
        .join('.+')}$`,
    );
    const row = rows.find(([name]) => pattern.test(name));
    return { gsup: row?.[1], anchors: row?.[4] };
  };
  const startup = figure('startup');
  const idle = figure('idle-rss');
  // tini's and dumb-init's memory: measured since the idle figure runs them too (an older run lacks it).
  const memory = (name) => {
    const match = new RegExp(`${name} ([\\d.]+) MiB \\(private ([\\d.]+) MiB\\)`).exec(idle.anchors ?? '');
    return { rss: match ? Number(match[1]) : undefined, private: match ? Number(match[2]) : undefined };
  };
  const [rss, anon] = read(idle.gsup, /^([\d.]+) MiB = [\d.]+× naive \(private ([\d.]+) MiB\)/, 'idle memory');
  const [header, ...drain] = tableRows(markdown, 'drain');
  const tsx = drain.find(([chain]) => chain === '`npx tsx server.ts`');
  const lost = (column) => read(tsx?.[header.indexOf(column)], /^(\d+) lost/, `drain figure for ${column}`)[0];
  return {
    startup: {
      ratio: read(startup.gsup, /= ([\d.]+)× node -e 0/, 'start-up ratio')[0],
      tiniMs: read(startup.anchors, /tini ([\d.]+) ms/, "tini's start-up")[0],
      dumbInitMs: read(startup.anchors, /dumb-init ([\d.]+) ms/, "dumb-init's start-up")[0],
    },
    preload: { ratio: read(figure('startup-preload').gsup, /= ([\d.]+)×/, 'start-up with a preload')[0] },
    idle: { gsup: { rss, private: anon }, tini: memory('tini'), 'dumb-init': memory('dumb-init') },
    tsxLost: { gsup: lost('gsup'), tini: lost('tini'), 'dumb-init': lost('dumb-init') },
    stopPeak: read(figure('stop-peak-rss').gsup, /^([\d.]+) MiB/, 'peak memory of the 1,000-process stop')[0],
    flood: read(figure('flood-through').gsup, /^(\d+) of (\d+)$/, 'the 30,000-signal flood'),
    restarts: restartsOf(markdown),
  };
}

/**
 * The restarts table's counts per scenario (bench/restarts.js), both client kinds summed: { refused, reset,
 * lost }; a scenario not measured is left out, and a run from before the figure has none.
 */
function restartsOf(markdown) {
  if (!markdown.includes('<!-- bench:restarts -->')) return {};
  const [header, ...rows] = tableRows(markdown, 'restarts');
  const column = (name) => header.indexOf(name);
  const found = {};
  let current;
  for (const cells of rows) {
    if (cells[0] !== '') current = Object.keys(SCENARIOS).find((id) => cells[0].startsWith(SCENARIOS[id]));
    const counts = ['refused', 'reset', 'lost'].map((name) => Number(cells[column(name)]));
    if (!current || counts.some((count) => !Number.isInteger(count))) continue;
    const sum = (found[current] ??= { refused: 0, reset: 0, lost: 0 });
    sum.refused += counts[0];
    sum.reset += counts[1];
    sum.lost += counts[2];
  }
  return found;
}

// `node bench/quotes.js`: the quoted figures rewritten from docs/performance.md as it stands (after
// a merge that took one run's tables, say); `npm run bench -- --write-docs` does it after its run.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const run = lastRun(readFileSync(`${root}docs/performance.md`, 'utf8'));
  for (const file of QUOTED_FILES) {
    const before = readFileSync(`${root}${file}`, 'utf8');
    const after = rewriteQuotes(file, before, run);
    if (after !== before) writeFileSync(`${root}${file}`, after);
    console.log(`${file}: ${after === before ? 'as the last run says' : 'rewritten from the last run'}`);
  }
}
