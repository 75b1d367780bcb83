// Types for bench/lib/proc.js (used by the benchmark and test/helpers/proc.ts).
export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
}
export declare function readProc(pid: number): Proc | undefined;
export declare function isAlive(pid: number): boolean;
export declare function commandLine(pid: number): string;
export declare function allProcs(): Proc[];
export declare function related(roots: number[], sessions?: number[]): Proc[];
export declare function descendants(root: number): Proc[];
export declare function childrenOf(pid: number): number[];
export declare function statusMiB(pid: number, field: string): number;
export declare function catches(pid: number, signo: number): boolean;
export declare function cpuMs(pid: number): number;
