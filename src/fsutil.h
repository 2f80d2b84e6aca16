/* fsutil.h - openshell's files on the host, written so nothing is lost.
 *
 * State lives under $XDG_CONFIG_HOME/openshell (default ~/.config/openshell)
 * in directories of mode 0700. Files are replaced atomically: a temporary
 * file in the same directory, fchmod, write, fsync, rename, fsync of the
 * directory. A crash or a full disk leaves the old file or the new one,
 * never a torn one.
 */
#ifndef OPENSHELL_FSUTIL_H
#define OPENSHELL_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* $XDG_CONFIG_HOME/openshell/gateways/NAME (not created). */
int gateway_state_dir(const char *name, char **dir, os_error *err);

/* mkdir -p with mode for every directory it creates. */
int mkdir_p(const char *path, mode_t mode, os_error *err);

int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode,
		      os_error *err);

/* Read a whole (small) file; max bounds what is accepted. */
int read_file(const char *path, size_t max, char **data, size_t *len, os_error *err);

#endif
