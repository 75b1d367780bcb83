// Types for scripts/container.js (used by the container tests and the drain benchmark).
export declare const IMAGE: string;
export declare function podmanSkipReason(): string | undefined;
export declare function podmanEnv(): NodeJS.ProcessEnv;
export declare function removePodmanConf(): void;
export declare function podman(args: string[], options?: { timeout?: number; input?: string }): string;
export declare function podmanTry(
  args: string[],
  options?: { timeout?: number },
): { status: number | null; stdout: string; stderr: string };
export declare function buildImage(tag?: string): { tini?: boolean; dumbInit?: boolean };
export declare function ownTag(now?: Date, pid?: number): string;
export declare function removeContainer(name: string): void;
