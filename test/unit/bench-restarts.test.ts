import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KindCounts } from '../../bench/lib/load.js';
import { cells, mergeRows } from '../../bench/lib/table.js';
import { lastRun, quoteWords } from '../../bench/quotes.js';
import { SCENARIOS, restartsTable, type ScenarioResult } from '../../bench/restarts.js';
import { ROOT } from '../helpers/gsup.js';

// The restarts figure's table and rows (bench/restarts.js), from counts as the load client gives them: each
// client kind apart, non-2xx beside refused, reset and lost, and read back by bench/quotes.js as the docs quote it.

const kind = (counts: Partial<KindCounts> = {}): KindCounts => ({
  attempts: 100,
  answered: 100,
  non2xx: 0,
  refused: 0,
  reset: 0,
  lost: 0,
  p50Ms: 301,
  p99Ms: 310,
  maxMs: 320,
  pids: {},
  ...counts,
});
const scenario = (id: string, keep: Partial<KindCounts> = {}): ScenarioResult => ({
  name: SCENARIOS[id],
  load1m: 1,
  idle: 0.9,
  crashes: [],
  events: [],
  kinds: { one: kind(), keep: kind(keep) },
  cpuMs: 100,
  wallMs: 1000,
  loopLagP99Ms: 1,
});

describe('bench/restarts.js: reloads of an app whose shutdown is its guide’s', () => {
  const lostKeep = { answered: 67, reset: 1, lost: 29, non2xx: 3 };
  const results = {
    steady: scenario('steady'),
    'reload-guide': scenario('reload-guide', lostKeep),
    'pm2-cluster-guide': scenario('pm2-cluster-guide', { answered: 70, lost: 30 }),
  };
  const { lines, rows } = restartsTable(results);

  it('its row reports each client kind apart, non-2xx included, and misses its budget on any failure', () => {
    const row = rows.find((each) => each.id === 'reloads-guide')!;
    expect(row.result).toBe(
      'one-connection: 0 refused, 0 reset, 0 lost, 0 non-2xx of 100, p99 310 ms; ' +
        'keep-alive: 0 refused, 1 reset, 29 lost, 3 non-2xx of 100, p99 310 ms; p99 1.00× no reload',
    );
    expect(row.anchors).toBe(
      'pm2 cluster reload: one-connection: 0 refused, 0 reset, 0 lost, 0 non-2xx of 100, p99 310 ms; ' +
        'keep-alive: 0 refused, 0 reset, 30 lost, 0 non-2xx of 100, p99 310 ms',
    );
    expect(cells(row).verdict).toBe('MISSED');
    const clean = restartsTable({ ...results, 'reload-guide': scenario('reload-guide') }).rows;
    expect(cells(clean.find((each) => each.id === 'reloads-guide')!).verdict).toBe('ok');
    const only503 = restartsTable({ ...results, 'reload-guide': scenario('reload-guide', { non2xx: 1 }) }).rows;
    expect(cells(only503.find((each) => each.id === 'reloads-guide')!).verdict).toBe('MISSED');
  });

  it('its table has a non-2xx column, and the docs read each kind back from it (bench/quotes.js)', () => {
    expect(lines[0]).toContain('| lost | non-2xx |');
    expect(lines).toContain(
      `| ${SCENARIOS['reload-guide']} | one-connection | 100 | 100 | 0 | 0 | 0 | 0 | 301 / 310 ms | - | 1.00; 90 % |`,
    );
    const performance = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
    const region = /(<!-- bench:restarts -->\n)[\s\S]*?(<!-- \/bench:restarts -->)/;
    const written = performance.replace(region, `$1${lines.join('\n')}\n$2`);
    const words = quoteWords(lastRun(written));
    expect(words.gsupGuideOne).toBe('0 / 0 / 0 / 0');
    expect(words.gsupGuideKeep).toBe('0 / 1 / 29 / 3');
    expect(words.pm2GuideKeep).toBe('0 / 0 / 30 / 0');
  });
});

describe('bench/lib/table.js: a partial run’s rows into the written table', () => {
  const performance = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8');
  const written = /<!-- bench:table -->\n([\s\S]*?)<!-- \/bench:table -->/.exec(performance)![1].trim().split('\n');
  const table = written.filter((line) => line.startsWith('|'));

  it('replaces that figure’s rows where they stand, keeps every other row as it was', () => {
    const row = { id: 'reloads', result: 'new words', anchors: 'anchors', measured: { refused: 1 } };
    const merged = mergeRows(written, [row]);
    expect(merged).toHaveLength(table.length);
    const at = table.findIndex((line) => line.startsWith('| reloads under HTTP load'));
    expect(merged[at]).toMatch(/^\| reloads under HTTP load .* \| new words \| .* \| MISSED \| anchors \|$/);
    expect(merged.filter((_, index) => index !== at)).toEqual(table.filter((_, index) => index !== at));
  });
});
