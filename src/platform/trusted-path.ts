import { lstatSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Why someone other than root and gsup's own user could change what `path`
 * holds: the file itself, or any directory above it, owned by another user
 * or writable by group or others. A directory with the sticky bit (`/tmp`)
 * may be writable by all: no one can rename or remove an entry of ours in it.
 * Undefined when no one else can; also where there are no owners (Windows).
 * `path` must be free of symbolic links (a realpath).
 */
export function writableByOthers(path: string): string | undefined {
  return upFrom(path, (current, stat, uid) => {
    if (stat.uid !== 0 && stat.uid !== uid) return `${current} belongs to uid ${stat.uid}`;
    const sticky = stat.isDirectory() && (stat.mode & 0o1000) !== 0 && current !== path;
    const writers = stat.mode & 0o002 ? 'others' : 'its group';
    return (stat.mode & 0o022) !== 0 && !sticky ? `${current} is writable by ${writers}` : undefined;
  });
}

/**
 * Why a user other than root and gsup's own could create, replace or remove
 * `path` (a regular file or a directory) or anything on the way to it: a symbolic link, or
 * a directory owned by another user or writable by group or others — sticky
 * or not: a name that is gone from `/tmp` can be taken by anyone. With
 * `readable`, also why another user could not load it (a directory it
 * cannot enter, a file it cannot read). Undefined when no one else can; also
 * where there are no owners (Windows).
 */
export function heldByOwners(path: string, readable: boolean): string | undefined {
  return upFrom(path, (current, stat, uid) => {
    const leaf = current === path;
    if (!stat.isDirectory() && !(leaf && stat.isFile())) return `${current} is not a ${leaf ? 'file' : 'directory'}`;
    if (stat.uid !== 0 && stat.uid !== uid) return `${current} belongs to uid ${stat.uid}`;
    if ((stat.mode & 0o022) !== 0) return `${current} is writable by ${stat.mode & 0o002 ? 'others' : 'its group'}`;
    if (readable && (stat.mode & (stat.isFile() ? 0o004 : 0o001)) === 0) return `${current} is closed to other users`;
    return undefined;
  });
}

/** The first reason `judge` finds from `path` up to `/` (each entry lstat'ed); none where there are no owners. */
function upFrom(path: string, judge: (current: string, stat: Stats, uid: number) => string | undefined) {
  const uid = process.geteuid?.();
  if (uid === undefined) return undefined;
  for (let current = path; ; current = dirname(current)) {
    let stat;
    try {
      stat = lstatSync(current);
    } catch (error) {
      return `${current} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
    }
    const reason = judge(current, stat, uid);
    if (reason !== undefined) return reason;
    if (dirname(current) === current) return undefined;
  }
}
