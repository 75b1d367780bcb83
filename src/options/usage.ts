export const USAGE = '[options] [--] <command> [args...]';
