import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  OTHER_FIGURES,
  QUOTED_FILES,
  SITES,
  lastRun,
  misquoted,
  quoteWords,
  quotesIn,
  rewriteQuotes,
  unsourcedFigures,
  type Run,
} from '../../bench/quotes.js';
import { ROOT } from '../helpers/gsup.js';

// The figures every doc (README.md, docs/*.md) quotes from the benchmark —
// start-up, memory, latency, requests lost, refused or reset — have one
// source: the last run of the benchmark, as docs/performance.md records it.
// `npm run bench -- --write-docs` writes that run and then these quotes;
// `node bench/quotes.js` rewrites the quotes alone. bench/quotes.js says
// where each figure is quoted and how, and which figures are no bench's.
describe('figures the docs quote: one source, the last full run (docs/performance.md)', () => {
  const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');
  const run = lastRun(text('docs/performance.md'));

  it('the run has the figures every doc needs: start-up, resident and private memory, losses', () => {
    const words = quoteWords(run);
    for (const name of ['gsupStartup', 'tiniStartup', 'dumbInitStartup', 'preloadStartup', 'gsupStopPeak'])
      expect(words[name], name).toMatch(/^[\d.]+(×| ms| MiB)$/);
    expect(words.gsupResident).toMatch(/^[\d.]+ MiB$/);
    expect(words.gsupPrivate).toMatch(/^[\d.]+ MiB$/);
    expect(Number.parseFloat(words.gsupPrivate)).toBeLessThan(Number.parseFloat(words.gsupResident));
    for (const name of ['gsupTsxLost', 'tiniTsxLost', 'dumbInitTsxLost']) expect(words[name], name).toMatch(/^\d+$/);
    expect(words.gsupFloodStops).toMatch(/^\d+ of \d+$/);
    for (const name of ['gsupTodayRefused', 'gsupListenRefused', 'pm2ForkRefused', 'gsupListenFailed'])
      expect(words[name], name).toMatch(/^\d+$/);
    for (const name of ['gsupReloadFailures', 'pm2ClusterReloadFailures'])
      expect(words[name]).toMatch(/^\d+ \/ \d+ \/ \d+$/);
    for (const name of ['gsupGuideOne', 'gsupGuideKeep', 'pm2GuideOne', 'pm2GuideKeep'])
      expect(words[name], name).toMatch(/^\d+ \/ \d+ \/ \d+ \/ \d+$/);
    expect(words.gsupReloadP99).toMatch(/^\d\.\d\d×$/);
  });

  it('every doc is held to the run: README.md and each of docs/*.md', () => {
    const docs = readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`);
    expect(new Set(QUOTED_FILES)).toEqual(new Set(['README.md', ...docs]));
    for (const { file } of [...SITES, ...OTHER_FIGURES]) expect(QUOTED_FILES, file).toContain(file);
  });

  it('every site reads as the run says (else: node bench/quotes.js)', () => {
    expect(QUOTED_FILES.flatMap((file) => misquoted(file, text(file), run))).toEqual([]);
  });

  it('no figure of start-up, memory, latency, loss, refusal or reset in any doc comes from elsewhere', () => {
    for (const file of QUOTED_FILES) {
      const unsourced = unsourcedFigures(file, text(file)).map(({ figure, line }) => `${file}:${line}: ${figure}`);
      expect(unsourced, 'figures no site of bench/quotes.js accounts for').toEqual([]);
    }
  });

  it('a stale figure fails: a quote that differs from the run, or a figure no site quotes', () => {
    // The run of docs/restarts.md as it was: 440 refused where the table said 421.
    const restarts = text('docs/restarts.md');
    const stale = restarts.replace(
      `${quoteWords(run).gsupTodayRefused} refused without \`--listen\`, ${quoteWords(run).gsupListenRefused} refused with it.`,
      `${Number(quoteWords(run).gsupTodayRefused) + 19} refused without \`--listen\`, 0 refused with it.`,
    );
    expect(stale).not.toBe(restarts);
    expect(misquoted('docs/restarts.md', stale, run)).toHaveLength(1);
    // A new sentence quoting a figure by hand.
    const signals = `${text('docs/signals.md')}\nIn a run of the bench, 362 connections refused and 36 reset.\n`;
    expect(unsourcedFigures('docs/signals.md', signals).map(({ figure }) => figure)).toEqual([
      '362 connections refused',
      '36 reset',
    ]);
    // A figure of OTHER_FIGURES gone from its doc: said, not silently passed.
    const other = OTHER_FIGURES.find((each) => each.file === 'docs/logs.md')!;
    const without = text('docs/logs.md').replace(/up to 256 lines \(64 KiB\)/, 'up to 256 lines');
    expect(() => unsourcedFigures('docs/logs.md', without)).toThrow(other.text);
  });

  it('resident and private memory are named together wherever gsup’s is quoted', () => {
    for (const file of QUOTED_FILES) {
      const names = new Set(quotesIn(file, text(file)).flatMap((found) => found.quotes.map((quote) => quote.name)));
      expect(names.has('gsupPrivate'), file).toBe(names.has('gsupResident'));
    }
    expect(SITES.some((site) => site.text.includes('{gsupResident}'))).toBe(true);
  });

  // A run with every figure, and one from before tini's and dumb-init's memory was measured.
  const measured: Run = {
    ...run,
    startup: { ratio: 1.46, tiniMs: 3.4, dumbInitMs: 0.82 },
    idle: {
      gsup: { rss: 51.24, private: 12.66 },
      tini: { rss: 1.31, private: 0.09 },
      'dumb-init': { rss: 1.18, private: 0.11 },
    },
  };
  const older: Run = {
    ...measured,
    idle: { ...measured.idle, tini: { rss: undefined, private: undefined } },
  };

  it('a new run rewrites every figure where it stands, and nothing else', () => {
    for (const file of QUOTED_FILES) {
      const rewritten = rewriteQuotes(file, text(file), measured);
      expect(misquoted(file, rewritten, measured), file).toEqual([]);
      expect(unsourcedFigures(file, rewritten), file).toEqual([]);
      // Back to the recorded run: the figures as they were (a site that switched form may wrap otherwise).
      expect(misquoted(file, rewriteQuotes(file, rewritten, run), run), file).toEqual([]);
    }
    const readme = rewriteQuotes('README.md', text('README.md'), measured);
    expect(readme).toContain('| ~1.5× `node -e 0`; ~51 MiB (~13 MiB) | ~3 ms; ~1.3 MiB (~0.1 MiB) |');
    expect(readme).toContain('| ~0.8 ms; ~1.2 MiB (~0.1 MiB) |');
    // Only the figures change: the rest of each table is as it was (limits.md's prose has words that come
    // and go with tini's memory: its sites are held above).
    const strip = (doc: string) => doc.replace(/[\d.]+ ?(×|MiB|ms)|not in the last run|[();~\s]/g, '');
    for (const file of ['README.md', 'docs/comparison.md'])
      expect(strip(rewriteQuotes(file, text(file), measured)), file).toBe(strip(text(file)));
  });

  it('a run without a figure says so where it would stand, and a later one puts it back', () => {
    const without = rewriteQuotes('docs/comparison.md', text('docs/comparison.md'), older);
    expect(without).toContain('| not in the last run | ~1.2 MiB (~0.1 MiB) |');
    expect(misquoted('docs/comparison.md', without, older)).toEqual([]);
    const again = rewriteQuotes('docs/comparison.md', without, measured);
    expect(again).toContain('| ~1.3 MiB (~0.1 MiB) | ~1.2 MiB (~0.1 MiB) |');
    const limits = rewriteQuotes('docs/limits.md', text('docs/limits.md'), older);
    expect(limits.replace(/\s+/g, ' ')).toContain('where tini takes ~3 ms. For a Node app');
  });

  it('a run that lacks a figure every doc needs is said plainly', () => {
    const broken = text('docs/performance.md').replace(/= [\d.]+× node -e 0/, '= ? node -e 0');
    expect(() => lastRun(broken)).toThrow('the last run (docs/performance.md) has no start-up ratio');
  });
});
