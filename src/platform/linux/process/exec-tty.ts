import { EXEC_CHANNEL, EXEC_KEEP, EXEC_STEPS, NODE_OPTIONS_PASSED } from './exec-tty-env.js';
import { execCommand } from '../native.js';

// gsup's own exec helper (its own bundle, run by node): `setsid -c COMMAND ARGS…` where the image has no
// setsid(1), so the command's new session still gets gsup's terminal; and, where there is no shell, the
// exec step of --listen (LISTEN_PID is the command's own pid: this process's, which exec keeps). Only the
// interactive case and shell-less images pay its start-up.

const ENOENT = 2;
const [command, ...args] = process.argv.slice(2);
const env = process.env;
// The app's NODE_OPTIONS, kept from this node (run.ts): the command gets them back (execvp takes this environment).
const nodeOptions = env[NODE_OPTIONS_PASSED];
const steps = (env[EXEC_STEPS] ?? 'session').split(',');
const keep = Number(env[EXEC_KEEP] ?? 0);
const channel = env[EXEC_CHANNEL];
for (const name of [NODE_OPTIONS_PASSED, EXEC_STEPS, EXEC_KEEP, EXEC_CHANNEL]) delete env[name];
if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
if (steps.includes('listen-pid')) env.LISTEN_PID = String(process.pid);
// This node took the IPC channel for itself at its start (and the variable with it): the command takes it again.
if (channel !== undefined) ((env.NODE_CHANNEL_FD = channel), (env.NODE_CHANNEL_SERIALIZATION_MODE = 'json'));
const fds = Array.from({ length: Number.isInteger(keep) && keep > 0 ? keep : 0 }, (_, index) => 3 + index);
const { step, errno } = execCommand(command, args, { session: steps.includes('session'), keep: fds });
process.stderr.write(`gsup: cannot run ${command}: ${step} failed${errno ? ` (errno ${errno})` : ''}\n`);
// As a shell says it: not found, or found but not runnable.
process.exit(step === 'execvp' && errno === ENOENT ? 127 : 126);
