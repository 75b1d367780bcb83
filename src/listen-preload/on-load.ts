// net and child_process are loaded by the app, not by the preload: loading them costs about 5 ms of every Node
// start of a run, and a process that never listens nor spawns (`node -e`, a worker, a short script) pays none of it.
// Each method the preload wraps is put on a prototype by assignment, after that prototype's parent became
// EventEmitter.prototype (net.js: `Server.prototype._listen2 = setupListenHandle`; internal/child_process.js:
// `ChildProcess.prototype.spawn = function …`). An accessor of that name on EventEmitter.prototype hears the
// assignment as the module loads, puts the wrapped method in its place, and is taken away. Any other emitter's
// assignment of that name meanwhile makes an ordinary own property, as it would have.
import { EventEmitter } from 'node:events';

/** One of Node's own methods, of any shape. */
export type Method = Function;

/** Where a method is defined: the builtin that defines it (as Node lists it loaded), its class, the method's name. */
export interface Site {
  /** The builtin's id in process.moduleLoadList (`NativeModule <listed>`). */
  listed: string;
  /** The public module that exports the class. */
  module: string;
  /** The class's name (its constructor's own name) and the method. */
  owner: string;
  name: string;
}

/** Whether Node has loaded builtin `listed` in this process (unknown: yes, so that the caller requires it). */
function loaded(listed: string): boolean {
  const list = (process as { moduleLoadList?: unknown }).moduleLoadList;
  return !Array.isArray(list) || list.includes(`NativeModule ${listed}`);
}

/** Hears `owner.prototype.name = method` (false: it cannot be heard, EventEmitter.prototype has that name). */
function hear(site: Site, wrap: (method: Method) => Method): boolean {
  const base = EventEmitter.prototype as unknown as Record<string, unknown>;
  if (Object.getOwnPropertyDescriptor(base, site.name)) return false;
  const own = (target: object, value: unknown) =>
    Reflect.defineProperty(target, site.name, { value, writable: true, enumerable: true, configurable: true });
  const accessor: PropertyDescriptor = {
    configurable: true,
    get: () => undefined,
    set(this: object, value: unknown) {
      const constructor = Object.prototype.hasOwnProperty.call(this, 'constructor')
        ? (this as { constructor?: { name?: unknown } }).constructor
        : undefined;
      if (constructor?.name !== site.owner || typeof value !== 'function') return void own(this, value);
      if (Object.getOwnPropertyDescriptor(base, site.name)?.set === accessor.set)
        Reflect.deleteProperty(base, site.name);
      own(this, wrap(value as Method));
    },
  };
  Object.defineProperty(base, site.name, accessor);
  return true;
}

/**
 * `wrap` puts itself around the method at `site`: when its module loads, or at once when it is loaded already
 * (then it is required here: that costs nothing more). Undefined, or a line saying why it is left to Node.
 */
export function wrapOnLoad(site: Site, wrap: (method: Method) => Method): string | undefined {
  if (!loaded(site.listed) && hear(site, wrap)) return undefined;
  const exported = require(`node:${site.module}`) as Record<string, { prototype?: Record<string, unknown> }>;
  const proto = exported[site.owner]?.prototype;
  const method = proto?.[site.name];
  if (!proto || typeof method !== 'function')
    return `this Node (${process.version}) has no ${site.owner}.prototype.${site.name}`;
  proto[site.name] = wrap(method as Method);
  return undefined;
}
