/**
 * Where a switch over every kind of a union ends (the shell's effects and
 * events): `value` is `never` only when each kind has its case, so a new
 * kind that nobody carries out does not compile.
 */
export function unhandled(value: never): never {
  throw new Error(`unhandled kind: ${(value as { kind?: unknown }).kind}`);
}
