import { writeSync } from 'node:fs';
import { binding, net } from '../../builtins.js';
import { countEpipe } from '../../sigpipe.js';
import type { Channel } from '../../held-sockets.js';

// A run's report channel (gsup's end of a socketpair) read in the event loop by Node's own pipe handle, the one
// under a net.Socket, without the net.Socket: node:net and the streams under it cost about 5 ms of a --listen
// start, on a machine whose other cores start the command meanwhile. Words are a line or two a run: each read
// is handed on as it comes, and gsup's own words are written at once (a few bytes on a socket nobody fills).
// Where this Node's handle is not as expected, a net.Socket reads it.

interface PipeHandle {
  open(fd: number): number;
  readStart(): number;
  unref(): void;
  close(callback?: () => void): void;
  onread: ((this: PipeHandle, buffer: ArrayBuffer | undefined) => void) | null;
}
interface Bindings {
  Pipe: new (type: number) => PipeHandle;
  SOCKET: number;
  state: Int32Array;
  nread: number;
  offset: number;
}

let bindings: Bindings | undefined | null;

/** pipe_wrap and stream_wrap as Node 20 and later have them, or null. */
function pipeBindings(): Bindings | null {
  if (bindings !== undefined) return bindings;
  const pipe = binding('pipe_wrap');
  const stream = binding('stream_wrap');
  const Pipe = pipe?.Pipe as Bindings['Pipe'] | undefined;
  const SOCKET = (pipe?.constants as { SOCKET?: unknown } | undefined)?.SOCKET;
  const { streamBaseState: state, kReadBytesOrError: nread, kArrayBufferOffset: offset } = stream ?? {};
  const fine =
    typeof Pipe === 'function' &&
    typeof SOCKET === 'number' &&
    state instanceof Int32Array &&
    typeof nread === 'number' &&
    typeof offset === 'number';
  bindings = fine ? { Pipe, SOCKET, state, nread, offset } : null;
  return bindings;
}

/** The pipe handle reads `fd` (it owns it now: closing the handle closes the fd). */
function readPipe(
  found: Bindings,
  pipe: PipeHandle,
  fd: number,
  heard: (text: string) => void,
  ended: () => void,
): Channel {
  let open = true;
  // A character may come in two reads.
  const decoder = new TextDecoder();
  const stop = (): boolean => {
    if (!open) return false;
    open = false;
    pipe.close();
    return true;
  };
  pipe.onread = (buffer) => {
    const size = found.state[found.nread];
    if (size > 0 && buffer)
      heard(decoder.decode(new Uint8Array(buffer, found.state[found.offset], size), { stream: true }));
    else if (size < 0 && stop()) ended();
  };
  // Said on the loop's next turn, as a socket's error would be: the caller has its channel by then.
  if (pipe.readStart() !== 0 && stop()) process.nextTick(ended);
  pipe.unref();
  return {
    write(text) {
      try {
        if (open) writeSync(fd, text);
      } catch (error) {
        // The run is gone (the kernel raised a SIGPIPE: gsup's own, not forwarded), or its end is full: a word
        // it would not read.
        countEpipe(error as NodeJS.ErrnoException);
      }
    },
    close: stop,
  };
}

/**
 * `fd` read in the loop (never keeping gsup alive): `heard` with each piece of text, `ended` once at its end (or
 * an error), never after close(). `handle` false: a net.Socket reads it (as where the pipe handle is not to be had).
 */
export function openChannel(fd: number, heard: (text: string) => void, ended: () => void, handle = true): Channel {
  const found = handle ? pipeBindings() : null;
  if (found) {
    const pipe = new found.Pipe(found.SOCKET);
    if (pipe.open(fd) === 0) return readPipe(found, pipe, fd, heard, ended);
    pipe.close();
  }
  let open = true;
  const end = () => {
    if (!open) return;
    open = false;
    ended();
  };
  const socket = new (net().Socket)({ fd, readable: true, writable: true });
  socket.unref();
  socket.setEncoding('utf8');
  socket.on('data', heard);
  socket.on('end', end);
  socket.on('error', (error) => {
    countEpipe(error);
    end();
  });
  socket.on('close', end);
  return {
    write(text) {
      if (open && !socket.destroyed) socket.write(text);
    },
    close() {
      open = false;
      socket.destroy();
    },
  };
}
