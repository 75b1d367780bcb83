import { execInNewSession } from './linux-native.js';

// gsup's own `setsid -c COMMAND ARGS…` (its own bundle, run by node): where
// the image has no setsid(1), the command's new session still gets gsup's
// terminal. Only the interactive case (`docker run -it`) pays its start-up.

const ENOENT = 2;
const [command, ...args] = process.argv.slice(2);
const { step, errno } = execInNewSession(command, args);
process.stderr.write(`gsup: cannot run ${command}: ${step} failed${errno ? ` (errno ${errno})` : ''}\n`);
// As a shell says it: not found, or found but not runnable.
process.exit(step === 'execvp' && errno === ENOENT ? 127 : 126);
