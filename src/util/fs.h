/* fs.h: small file-system helpers: whole-file reads, atomic writes, paths. */
#ifndef EGG_FS_H
#define EGG_FS_H

#include <stddef.h>

#include "buf.h"

/* Read the whole file at `path` into `out` (appended). On failure records
 * ERR_INPUT "cannot read 'PATH': REASON" and returns -1. */
int fs_read(const char *path, struct buf *out);
/* Write `len` bytes to `path` atomically: a temporary file in the same
 * folder, fsync, rename. Returns 0 or -1 (ERR_INFRA). */
int fs_write_atomic(const char *path, const void *data, size_t len);
/* The same without fsync: for artifacts that a crash may lose (run-folder
 * copies of what the store and the caches hold durably). */
int fs_write_atomic_nosync(const char *path, const void *data, size_t len);
/* Removes what fs_write_atomic left in `dir` when its process died between
 * writing and renaming (NAME.tmp.PID.N of a PID no longer alive). */
void fs_remove_stale_temps(const char *dir);
/* Create `path` and its parents (mode 0755); existing folders are fine. */
int fs_mkdir_p(const char *path);
int fs_exists(const char *path);
int fs_is_dir(const char *path);
/* Join two path parts with one '/'; newly allocated. */
char *fs_join(const char *a, const char *b);
/* Remove a folder tree (best effort). */
void fs_remove_tree(const char *path);
/* The directory of this executable (resolved from /proc/self/exe); newly
 * allocated, or NULL. */
char *fs_exe_dir(void);
/* Absolute form of `path` (need not exist); newly allocated. */
char *fs_absolute(const char *path);
/* The path of `to` relative to the folder `from_dir` ("../runs/x/final.py"),
 * both resolved through symbolic links where they exist; malloc'd. */
char *fs_relative(const char *from_dir, const char *to);

#endif
