import { duplicateName, parseListen, type ListenAddress } from '../engine/listen/address.js';
import { quoted, UsageError } from './errors.js';

/** `--listen` (repeatable) or GSUP_LISTEN (a comma list), and `--no-listen-preload` or GSUP_LISTEN_PRELOAD=0. */
export interface ListenOptions {
  /** The sockets to hold, in order (fds 3…); none without --listen. */
  listen: ListenAddress[];
  /** Append gsup's preload to the command's NODE_OPTIONS (not with --no-listen-preload). */
  listenPreload: boolean;
}

/** Each `[NAME=]ADDRESS` read (`what`: the flag or variable that gave it), names unique; or a UsageError. */
export function listenOptions(given: Array<[string, string]>, preload: boolean): ListenOptions {
  const listen = given.map(([value, what]) => {
    const address = parseListen(value);
    if (typeof address === 'string') throw new UsageError(`invalid value ${quoted(value)} for ${what}: ${address}`);
    return address;
  });
  const twice = duplicateName(listen);
  if (twice !== undefined) {
    const what = given[0][1];
    throw new UsageError(`the name ${JSON.stringify(twice)} is given twice for ${what}: each held socket's is unique`);
  }
  return { listen, listenPreload: preload };
}
