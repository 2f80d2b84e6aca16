/* base/files.h - openshell's files on the host, written so nothing is lost.
 *
 * State lives under $XDG_CONFIG_HOME/openshell (default ~/.config/openshell)
 * in directories of mode 0700. Files are replaced atomically: a temporary
 * file in the same directory, fchmod, write, fsync, rename, fsync of the
 * directory. A crash or a full disk leaves the old file or the new one,
 * never a torn one.
 */
#ifndef OPENSHELL_BASE_FILES_H
#define OPENSHELL_BASE_FILES_H

#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

/* $XDG_CONFIG_HOME/openshell, or ~/.config/openshell (not created). */
int config_root(char **dir, os_error *err);

/* $XDG_CONFIG_HOME/openshell/gateways/NAME (not created). */
int gateway_state_dir(const char *name, char **dir, os_error *err);

/* An exclusive lock on gateway NAME (openshell/locks/NAME.lock, flock), so
 * that two commands never change one gateway at once. Waits, saying so
 * once, until the deadline (OS_EXIT_TIMEOUT) or an interrupt. Returns the
 * lock's fd; release it with gateway_unlock(). The lock file stays: it is
 * empty, and removing it would let two waiters lock different files. */
int gateway_lock(const char *name, long long deadline, os_error *err);
void gateway_unlock(int fd);

/* mkdir -p with mode for every directory it creates. */
int mkdir_p(const char *path, mode_t mode, os_error *err);

/* write(2) until all of buf is written, retrying on EINTR. 0, or -1 with
 * errno set. */
int write_all(int fd, const char *buf, size_t len);

int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode,
		      os_error *err);

/* An anonymous read-write file, close-on-exec: a memfd, else one in
 * $TMPDIR (default /tmp), O_TMPFILE or a mkstemp file unlinked at once.
 * Nothing is left on disk. */
int anonymous_file(os_error *err);

/* Read a whole (small) file; max bounds what is accepted. */
int read_file(const char *path, size_t max, char **data, size_t *len, os_error *err);

#endif
