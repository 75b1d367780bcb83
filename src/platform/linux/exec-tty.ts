import { NODE_OPTIONS_PASSED } from './exec-tty-env.js';
import { execInNewSession } from './native.js';

// gsup's own `setsid -c COMMAND ARGS…` (its own bundle, run by node): where
// the image has no setsid(1), the command's new session still gets gsup's
// terminal. Only the interactive case (`docker run -it`) pays its start-up.

const ENOENT = 2;
const [command, ...args] = process.argv.slice(2);
// The app's NODE_OPTIONS, kept from this node (run.ts): the command gets them back (execvp takes this environment).
const nodeOptions = process.env[NODE_OPTIONS_PASSED];
delete process.env[NODE_OPTIONS_PASSED];
if (nodeOptions !== undefined) process.env.NODE_OPTIONS = nodeOptions;
const { step, errno } = execInNewSession(command, args);
process.stderr.write(`gsup: cannot run ${command}: ${step} failed${errno ? ` (errno ${errno})` : ''}\n`);
// As a shell says it: not found, or found but not runnable.
process.exit(step === 'execvp' && errno === ENOENT ? 127 : 126);
