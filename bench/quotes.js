// The figures the docs quote (start-up, memory, latency, requests lost, refused or reset, a flood),
// each from one source: the last run, as docs/performance.md records it
// (its tables, written by `npm run bench -- --write-docs`, which then
// rewrites these quotes too; `node bench/quotes.js` rewrites them alone).
// test/unit/doc-figures.test.ts holds every quote to that run, and fails on
// a figure in any doc (README.md, docs/*.md) that no site accounts for and
// that is not listed as another kind of figure (OTHER_FIGURES: a constant,
// a test's, a measurement of its own).
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BUDGETS } from './budgets.js';
import { SCENARIOS } from './restarts.js';

/**
 * Every doc: each is held to the run (docs/performance.md too: its tables are the run, and the prose under the
 * restarts table quotes them; the rest of its prose weighs runs against each other, see PROSE_CHECKED).
 */
export const QUOTED_FILES = [
  'README.md',
  ...readdirSync(new URL('../docs/', import.meta.url))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Where in a file figures are checked (all of it unless named): from `from` to the next heading. */
const PROSE_CHECKED = { 'docs/performance.md': { from: '<!-- /bench:restarts -->' } };

// How each quote is written: what it matches in a doc, and its words from a value.
const round = (value, decimals) => Number(value.toFixed(decimals)).toString();
const KINDS = {
  ratio: { pattern: String.raw`[\d.]+×`, words: (value) => `${round(value, 1)}×` },
  /** Two decimals: a ratio held near 1 (a p99 against no reload, a median against the naive forwarder). */
  ratio2: { pattern: String.raw`[\d.]+×`, words: (value) => `${value.toFixed(2)}×` },
  ms: { pattern: String.raw`[\d.]+\s+ms`, words: (value) => `${round(value, value < 1 ? 1 : 0)} ms` },
  mib: { pattern: String.raw`[\d.]+\s+MiB`, words: (value) => `${round(value, value < 10 ? 1 : 0)} MiB` },
  count: { pattern: String.raw`\d+`, words: (value) => String(value) },
  ofCount: { pattern: String.raw`\d+\s+of\s+\d+`, words: ([got, of]) => `${got} of ${of}` },
  /** refused / reset / lost */
  failures: {
    pattern: String.raw`\d+\s+/\s+\d+\s+/\s+\d+`,
    words: ({ refused, reset, lost }) => `${refused} / ${reset} / ${lost}`,
  },
  /** refused / reset / lost / non-2xx */
  answers: {
    pattern: String.raw`\d+\s+/\s+\d+\s+/\s+\d+\s+/\s+\d+`,
    words: ({ refused, reset, lost, non2xx }) => `${refused} / ${reset} / ${lost} / ${non2xx}`,
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
  // Reset + lost under crashes, and the connections the crashing runs held (the app counts them as it crashes).
  gsupListenFailed: ['count', (run) => failed(run.restarts?.listen)],
  gsupListenHeld: ['count', (run) => run.restarts?.listen?.held],
  gsupTodayFailed: ['count', (run) => failed(run.restarts?.today)],
  gsupReloadP99: ['ratio2', (run) => run.reloadP99],
  // The app whose shutdown is its guide's (`server.close()`), each client kind apart.
  gsupGuideOne: ['answers', (run) => run.restarts?.['reload-guide']?.kinds.one],
  gsupGuideKeep: ['answers', (run) => run.restarts?.['reload-guide']?.kinds.keep],
  pm2GuideOne: ['answers', (run) => run.restarts?.['pm2-cluster-guide']?.kinds.one],
  pm2GuideKeep: ['answers', (run) => run.restarts?.['pm2-cluster-guide']?.kinds.keep],
  // What the load client counts with nothing happening: every failure summed (0 when the client is right).
  calmFailed: ['count', (run) => failed(run.restarts?.calm, true)],
  steadyFailed: ['count', (run) => failed(run.restarts?.steady, true)],
  // What `--listen` adds: to a Node command's start (ms), to the forwarding latency (median against naive).
  listenStartupExtra: ['ms', (run) => run.listen?.startupMs],
  latencyRatio: ['ratio2', (run) => run.latency?.ratio],
  listenLatencyRatio: ['ratio2', (run) => run.listen?.latencyRatio],
};

/** Reset + lost (and refused and non-2xx with `all`) of a scenario; undefined when not measured. */
function failed(counts, all = false) {
  if (!counts) return undefined;
  return counts.reset + counts.lost + (all ? counts.refused + counts.non2xx : 0);
}

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
  {
    file: 'docs/restarts.md',
    text:
      'Measured by `npm run bench` (20 clients, an app that crashes twice in about 4 s, `--restart always ' +
      '--restart-delay 100ms`): [[{gsupTodayRefused} refused without `--listen`, {gsupListenRefused} refused with ' +
      'it||not in the last run]]',
  },
  {
    file: 'docs/restarts.md',
    text:
      '(`--restart always --restart-delay 100ms`): [[{gsupTodayRefused} refused without `--listen`, ' +
      '{gsupListenRefused} refused with it. With it, {gsupListenFailed} reset or lost, where the crashing runs had ' +
      'accepted {gsupListenHeld} connections (the app counts them as it crashes): a crash takes what its run holds, ' +
      'with or without `--listen` ({gsupTodayFailed} reset or lost without)||not in the last run]].',
  },
  {
    file: 'docs/restarts.md',
    text:
      '(it stops accepting, answers with `Connection: close`, ends idle keep-alive connections itself): ' +
      '[[refused / reset / lost {gsupReloadFailures}, p99 latency {gsupReloadP99} the same load with no reload; ' +
      "pm2's cluster-mode `pm2 reload` of the same app: {pm2ClusterReloadFailures}||not in the last run]]",
  },
  {
    file: 'docs/restarts.md',
    text:
      'refused / reset / lost / non-2xx for one-connection clients: [[{gsupGuideOne}; for keep-alive clients: ' +
      "{gsupGuideKeep}||not in the last run]]. pm2's cluster-mode reload of the same app: [[{pm2GuideOne} and " +
      '{pm2GuideKeep}||not in the last run]].',
  },
  {
    file: 'docs/restarts.md',
    text: "run: 0.3 s). pm2's fork mode: [[{pm2ForkRefused} refused||not in the last run]].",
  },
  {
    file: 'docs/restarts.md',
    text: '[[a Node command starts {listenStartupExtra} later||a Node command starts later]]',
  },
  {
    file: 'docs/restarts.md',
    text:
      "[[the forwarding latency's median is {listenLatencyRatio} the naive forwarder's with `--listen`, " +
      '{latencyRatio} without||the forwarding latency is not in the last run]]',
  },
];

// The prose under the restarts table (docs/performance.md) quotes its own tables.
SITES.push(
  {
    file: 'docs/performance.md',
    text: "the next run's `listen()`: [[{gsupTodayRefused} refused||none measured]] in two gaps here",
  },
  {
    file: 'docs/performance.md',
    text: "pm2's fork mode refuses the same way ([[{pm2ForkRefused} refused||not in the last run]]: each run",
  },
  {
    file: 'docs/performance.md',
    text: 'With `--listen`, [[{gsupListenRefused} refused||not in the last run]]: the kernel queues what arrives until',
  },
  {
    file: 'docs/performance.md',
    text:
      'What still fails is what the crashing runs held: [[{gsupListenFailed} reset or lost here, where they had ' +
      'accepted {gsupListenHeld} connections; without `--listen`, {gsupTodayFailed} reset or lost||not in the last ' +
      'run]], and there',
  },
  {
    file: 'docs/performance.md',
    text:
      '**Reloads.** [[Refused / reset / lost {gsupReloadFailures} and p99 {gsupReloadP99} the same load with no ' +
      "reload for gsup's `--reload-signal`, {pm2ClusterReloadFailures} for pm2's cluster mode||Not in the last run]]:",
  },
  {
    file: 'docs/performance.md',
    text:
      'Refused / reset / lost / non-2xx under gsup: [[{gsupGuideOne} for the one-connection clients, ' +
      "{gsupGuideKeep} for the keep-alive ones; under pm2's cluster reload: {pm2GuideOne} and {pm2GuideKeep}||not " +
      'in the last run]].',
  },
  {
    file: 'docs/performance.md',
    text:
      'With nothing happening it counted [[{calmFailed} failures (refused, reset, lost or non-2xx) under the ' +
      "crashes' load and {steadyFailed} under the reloads' one||not in the last run]];",
  },
);

// A figure in a doc: a ratio, memory, milliseconds, requests lost, refused, reset or not 2xx. Each must be a
// site's, or one of OTHER_FIGURES.
const FIGURE =
  /\d[\d.,]*(?:–\d[\d.,]*)?\s*(?:×|[KMG]iB)|\d[\d.]*\s+ms\b|\d[\d,]*\s+(?:connections\s+)?(?:lost|refused|reset|non-2xx)\b/g;

/**
 * Figures in the docs that are not the bench's: each is found exactly once in its file (text, spaces standing
 * for any white space), and says why it is not quoted from the run.
 */
export const OTHER_FIGURES = [
  { file: 'docs/health-checks.md', text: 'about 3 × (30 s + 5 s) = 105 s', why: 'arithmetic of the defaults' },
  { file: 'docs/internals.md', text: 'every 250 ms until it is ready', why: 'a constant of the code' },
  { file: 'docs/kubernetes.md', text: 'never read as 30 ms', why: 'an example of a value' },
  { file: 'docs/logs.md', text: 'up to 256 lines (64 KiB)', why: 'a constant of the code' },
  {
    file: 'docs/restarts.md',
    text:
      "a reload's next run every 250 ms until it is ready, and once more at its ready timeout before the " +
      'reload fails; any other run from 250 ms',
    why: 'constants of the code',
  },
  {
    file: 'docs/restarts.md',
    text: 'about 0.5 ms more than an empty file in a process that was handed nothing',
    why: "a measurement of its own (require() of the preload's bundle), not the bench's",
  },
  {
    file: 'docs/restarts.md',
    text: '(`test/e2e/listen.test.ts` holds the same load to 0 refused)',
    why: 'what a test holds',
  },
  {
    file: 'docs/restarts.md',
    text: '`await app.close()`): 0 refused, 0\nreset, 0 lost',
    why: 'what a test holds (test/e2e/reload.test.ts, test/e2e/drain.test.ts)',
  },
  { file: 'docs/signals.md', text: 'a few milliseconds (4–8 ms measured here', why: 'a measurement of its own' },
  { file: 'docs/signals.md', text: 'while a command line is read (up to 100 ms)', why: 'a constant of the code' },
  { file: 'docs/signals.md', text: 'within 30 ms, that it got the signal', why: "tsx's constant" },
  { file: 'docs/signals.md', text: 'a look waits for them 100 ms at most', why: 'a constant of the code' },
  {
    file: 'docs/performance.md',
    text: 'a run of the figure alone on a busy machine: 319 ms',
    why: 'another run, named as such',
  },
  {
    file: 'docs/performance.md',
    text: 'tries again every 20 ms; the gap is the restart delay, 100 ms and then 200 ms',
    why: "the bench's settings",
  },
  { file: 'docs/performance.md', text: '`restart_delay` stays 100 ms', why: "the bench's setting" },
  { file: 'docs/performance.md', text: "timeout (gsup's 8 s,", why: 'the default kill timeout' },
];

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

/** Where each of OTHER_FIGURES stands in a file: [start, end); throws when one is not there exactly once. */
export function otherFiguresIn(file, text) {
  return OTHER_FIGURES.filter((other) => other.file === file).map((other) => {
    const matches = [...text.matchAll(new RegExp(escape(other.text).replace(/\s+/g, String.raw`\s+`), 'g'))];
    if (matches.length !== 1)
      throw new Error(`${file}: ${matches.length === 0 ? 'no' : matches.length} place(s) reading "${other.text}"`);
    return [matches[0].index, matches[0].index + matches[0][0].length];
  });
}

/** Figures in a file's text (outside code) that no site quotes and OTHER_FIGURES does not name: { figure, line }. */
export function unsourcedFigures(file, text) {
  // Code (fenced or inline) is blanked, keeping every offset: `500ms` there is an example, not a figure.
  let prose = text.replace(/```[\s\S]*?```|`[^`\n]*`/g, (code) => code.replace(/[^\n]/g, ' '));
  const checked = PROSE_CHECKED[file];
  if (checked) {
    const from = text.indexOf(checked.from);
    if (from < 0) throw new Error(`${file}: no "${checked.from}"`);
    const heading = text.indexOf('\n#', from);
    const to = heading < 0 ? text.length : heading;
    prose = prose.replace(/[^\n]/g, (char, index) => (index >= from && index < to ? char : ' '));
  }
  const quoted = quotesIn(file, text).flatMap((found) => found.quotes.map((quote) => [quote.start, quote.end]));
  const spans = [...quoted, ...otherFiguresIn(file, text)];
  return [...prose.matchAll(FIGURE)]
    .filter((match) => !spans.some(([start, end]) => match.index >= start && match.index < end))
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
  const latency = figure('latency');
  const listenStartup = figure('startup-listen');
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
    // A figure a run from before it lacks: undefined.
    reloadP99: maybe(figure('reloads').gsup, /= ([\d.]+)× no reload/),
    latency: { ratio: maybe(latency.gsup, /= ([\d.]+)× naive/) },
    listen: {
      startupMs: difference(
        maybe(listenStartup.gsup, /^([\d.]+) ms/),
        maybe(listenStartup.anchors, /without --listen: ([\d.]+) ms/),
      ),
      latencyRatio: maybe(figure('latency-listen').gsup, /= ([\d.]+)× naive/),
    },
  };
}

/** The number a pattern finds in a cell, else undefined. */
const maybe = (cell, pattern) => {
  const match = pattern.exec(cell ?? '');
  return match ? Number(match[1]) : undefined;
};
const difference = (a, b) => (a === undefined || b === undefined ? undefined : a - b);

/**
 * The restarts table's counts per scenario (bench/restarts.js), both client kinds summed: { refused, reset,
 * lost, non2xx, held, kinds: { one, keep } }; a scenario not measured is left out, and a run from before the
 * figure has none (one from before non-2xx was counted: 0 non-2xx).
 */
function restartsOf(markdown) {
  if (!markdown.includes('<!-- bench:restarts -->')) return {};
  const [header, ...rows] = tableRows(markdown, 'restarts');
  const column = (name) => header.indexOf(name);
  const found = {};
  const KIND = { 'one-connection': 'one', 'keep-alive': 'keep' };
  const FIELDS = ['refused', 'reset', 'lost', 'non2xx'];
  let current;
  for (const cells of rows) {
    if (cells[0] !== '') current = Object.keys(SCENARIOS).find((id) => cells[0].startsWith(SCENARIOS[id]));
    const cell = (name) => (column(name) < 0 ? '0' : cells[column(name)]);
    const counts = ['refused', 'reset', 'lost', 'non-2xx'].map((name) => Number(cell(name)));
    if (!current || counts.some((count) => !Number.isInteger(count))) continue;
    const sum = (found[current] ??= { refused: 0, reset: 0, lost: 0, non2xx: 0, held: undefined, kinds: {} });
    const kind = (sum.kinds[KIND[cells[column('clients')]]] = {});
    FIELDS.forEach((field, index) => {
      sum[field] += counts[index];
      kind[field] = counts[index];
    });
    const held = /^(\d+) \(/.exec(cell('at the crashes') ?? '');
    if (held) sum.held = Number(held[1]);
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
