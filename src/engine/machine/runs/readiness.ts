import type { State } from '../state.js';
import type { HealthState } from '../values.js';

/** Why the supervision is not ready, in one word: what `/readyz` answers with its 503. */
export type NotReady = 'starting' | 'unhealthy' | 'stopping' | 'restarting';
export type Readiness = { ready: true } | { ready: false; reason: NotReady };

/**
 * Ready while the command runs (or the daemons it handed over to), its
 * health checks (if any) have passed since this run started and the last
 * one passed, the app said it is ready (with --wait-ready; and has not said
 * it is stopping), and no stop or restart is under way. Not ready from the
 * moment a stop signal arrives, before any stop delay, so a load balancer
 * drains first.
 */
export function readiness(state: State, health: HealthState | undefined): Readiness {
  switch (state.phase) {
    case 'running':
    case 'daemons':
      // Failing: a check failed since the last pass; not stopped before the retries run out, but not ready either.
      if (health === 'unhealthy' || health === 'failing') return { ready: false, reason: 'unhealthy' };
      if (health === 'starting' || state.run.app === 'waiting') return { ready: false, reason: 'starting' };
      if (state.run.app === 'stopping') return { ready: false, reason: 'stopping' };
      return { ready: true };
    case 'starting':
      return { ready: false, reason: 'starting' };
    case 'restarting':
      return { ready: false, reason: 'restarting' };
    case 'exited':
      return { ready: false, reason: state.restart ? 'restarting' : 'stopping' };
    case 'stop-delay':
    case 'stopping':
    case 'killing':
      if (state.stop.then === 'restart') return { ready: false, reason: 'restarting' };
      // A failed start (--ready-timeout) is the app's failure, as failed health checks are.
      const failed = state.stop.cause === 'unhealthy' || state.stop.cause === 'not-ready';
      return { ready: false, reason: failed ? 'unhealthy' : 'stopping' };
    case 'ending':
    case 'done':
      return { ready: false, reason: 'stopping' };
  }
}
