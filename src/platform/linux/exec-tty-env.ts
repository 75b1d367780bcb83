/** Where the app's NODE_OPTIONS wait while gsup's exec helper (a node) runs: the helper must not load them. */
export const NODE_OPTIONS_PASSED = 'GSUP_EXEC_NODE_OPTIONS';
