import { describe, expect, it, vi } from 'vitest';
import { parseCommandLine } from '../../src/options/cli-options.js';
import { LONG, plainFlags, SHORT } from '../../src/options/command-line.js';
import * as flags from '../../src/options/flags.js';

// The plain forms of gsup's options are read without commander (command-line.ts): here, on every command line of a
// seeded random corpus that the short reader takes, commander reads the same flags and the same command.

const commander = (argv: string[]) => flags.readFlags(argv, '0.0.0', () => {});

/** Each option commander knows, as flags.ts defines it: its long and short names, and whether it takes a value. */
function programOptions() {
  return flags
    .buildProgram('0.0.0', () => {})
    .options.map((option) => ({
      long: option.long!,
      short: option.short,
      value: option.required || option.optional,
      negate: option.negate,
    }));
}

/** A small seeded generator (mulberry32): the same corpus on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the plain forms of the options, read without commander', () => {
  it("names the options commander's definition names (flags.ts), each of the same kind: a copy kept by hand", () => {
    // --version ends gsup there: commander's alone.
    const options = programOptions().filter((option) => option.long !== '--version');
    expect([...LONG.keys()].sort()).toStrictEqual(options.map((option) => option.long.slice(2)).sort());
    const shorts = options.flatMap((option) => (option.short ? [[option.short, option.long.slice(2)]] : []));
    expect([...SHORT].sort()).toStrictEqual(shorts.sort());
    for (const option of options) {
      const kind = LONG.get(option.long.slice(2));
      const ours = { option: option.long, value: kind === 'value' || kind === 'list', negate: kind === 'off' };
      expect(ours).toStrictEqual({ option: option.long, value: !!option.value, negate: option.negate });
    }
    // Each is taken in its plain forms: the promise is kept, not only on a random corpus.
    for (const [name, kind] of LONG) {
      const given = kind === 'value' || kind === 'list' ? [`--${name}`, 'x'] : [`--${name}`];
      expect(plainFlags([...given, '--', 'node']), name).toBeDefined();
      if (given.length === 2) expect(plainFlags([`--${name}=x`, 'node']), name).toBeDefined();
    }
    expect(plainFlags(['-vvv', '-q', 'node'])?.flags).toMatchObject({ verbose: 3, quiet: true });
  });

  it('on 20,000 command lines, whatever the short reader takes, commander reads alike; it takes every option', () => {
    const options = programOptions();
    const names = options.flatMap((option) => [option.long, ...(option.short ? [option.short] : [])]);
    const odd = ['-vv', '-vvv', '-vq', '-tv', '-t5s', '-h', '--help', '-V', '--version', '--bogus', '--no-x'];
    odd.push('--wait-ready=1', '--no-pm2=0', '--verbose=2', '--quiet=', '--=x', '--listen=', '--listen==', '-');
    // Positive forms of the negations, abbreviations, a negated count, odd dashes.
    odd.push('--pm2', '--subreaper', '--listen-preload', '--verb', '--kill', '--no-verbose', '-v-', '---v', '-1');
    const values = ['5s', '8080', 'admin=127.0.0.1:9000', 'TERM:INT', 'always', '', '=', 'x y', '-1', '--', '-v'];
    values.push('__proto__', ' ', '\n', 'constructor');
    const tail = ['node', 'app.js', '--port', '-v', '-h', '--help', '-V', '--', '__proto__', ''];
    const next = random(37);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
    const taken = new Set<string>();
    let read = 0;
    for (let round = 0; round < 20_000; round++) {
      const argv: string[] = [];
      for (let count = Math.floor(next() * 6); count > 0; count--) {
        const roll = next();
        if (roll < 0.6) {
          const option = pick(options);
          const form = next();
          if (option.value && form < 0.2) argv.push(`${option.long}=${pick(values)}`);
          else {
            argv.push(form < 0.8 || !option.short ? option.long : option.short);
            if (option.value && next() < 0.95) argv.push(pick(values));
          }
        } else if (roll < 0.75) argv.push(pick(odd));
        else argv.push(pick(names), pick(values));
      }
      if (next() < 0.7) argv.push('--');
      for (let count = Math.floor(next() * 3); count > 0; count--) argv.push(pick(tail));
      const plain = plainFlags(argv);
      if (plain === undefined) continue;
      read++;
      let full: ReturnType<typeof commander> | string;
      try {
        full = commander(argv);
      } catch (error) {
        full = String(error);
      }
      expect({ argv, read: full }).toStrictEqual({ argv, read: plain });
      for (const key of Object.keys(plain.flags)) taken.add(key);
      for (const arg of argv.slice(0, argv.indexOf('--'))) if (arg.startsWith('-')) taken.add(arg);
    }
    // Not a corpus of nothing: thousands read, and each option of commander's taken at least once (but the
    // version's, which ends gsup there).
    expect(read).toBeGreaterThan(3_000);
    const run = options.filter((option) => option.long !== '--version');
    for (const option of run) expect(taken, option.long).toContain(option.long);
    for (const short of run.flatMap((option) => option.short ?? [])) expect(taken, short).toContain(short);
  });

  it("the forms a deployment writes start without commander's bundle; anything else goes to commander", async () => {
    const readFlags = vi.spyOn(flags, 'readFlags');
    const parse = async (argv: string[]) => {
      const request = await parseCommandLine(argv, {}, '0.0.0', () => {});
      if (request.kind !== 'run') throw new Error('expected a run');
      return request.options;
    };
    const plain = await parse(['-v', '--restart=always', '--grace', '30s', '-t', '5s', '--', 'node', 'app.js']);
    expect(await parse(['-vv', '--no-pm2', '--status-port', '9100', '-r', 'TERM:INT', '--', 'x'])).toMatchObject({
      verbosity: 2,
      pm2: false,
    });
    expect(readFlags).not.toHaveBeenCalled();
    expect(plain).toMatchObject({ command: 'node', args: ['app.js'], verbosity: 1, restart: 'always' });
    // The same through commander (a short option's value run into it, `-t5s`, is not a plain form).
    const full = await parse(['-v', '--restart', 'always', '--grace', '30s', '-t5s', '--', 'node', 'app.js']);
    expect(readFlags).toHaveBeenCalledOnce();
    expect(plain).toEqual(full);
    for (const argv of [
      ['-vq', '--', 'x'],
      ['--restart', '-1', '--', 'x'],
      ['-v', '-1'],
      ['--bogus', '--', 'x'],
    ])
      await parse(argv).catch(() => undefined);
    expect(readFlags).toHaveBeenCalledTimes(5);
    readFlags.mockRestore();
  });
});
