/* kube/user_kubeconfig.c - the user's kubeconfig, changed under kubectl's
 * lock (see kube/user_kubeconfig.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "kube/kubeconfig.h"
#include "kube/user_kubeconfig.h"

static char *user_kubeconfig_path(os_error *err)
{
	const char *env = getenv("KUBECONFIG");
	const char *home = getenv("HOME");

	if (env && *env && *env != ':')
		return xstrndup(env, strcspn(env, ":"));
	if (home && *home == '/')
		return xasprintf("%s/.kube/config", home);
	os_error_set(err, OS_EXIT_FAILURE, "cannot find your kubeconfig: set KUBECONFIG or HOME");
	return NULL;
}

/* kubectl's lock: FILE.lock, made exclusively, removed when done. A holder
 * that outlives the wait is named, with how to clear a stale lock. */
static int lock_user(const char *path, char **lock, os_error *err)
{
	long long deadline = clock_ms() + USER_KUBECONFIG_LOCK_WAIT_MS;
	struct backoff b = { 0 };

	cleanup_free char *name = xasprintf("%s.lock", path);

	*lock = NULL;   /* set only once the lock is ours: never remove another's */
	for (;;) {
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			*lock = xstrdup(name);
			return 0;
		}
		if (errno != EEXIST)
			return os_error_set(err, OS_EXIT_FAILURE, "cannot lock %s (%s): %s", path, name, strerror(errno));
		if (signals_stop_requested())
			return os_error_set(err, 128 + signals_pending(), "interrupted while waiting for %s", name);
		if (!backoff_wait(&b, deadline))
			return os_error_set(err, OS_EXIT_FAILURE,
					    "%s is locked (%s exists): another kubectl or openshell is changing it; if none is, remove the stale %s",
					    path, name, name);
	}
}

static void unlock_user(char *lock)
{
	if (lock)
		unlink(lock);
	free(lock);
}

/* Read the file (absent: NULL), under the lock the caller holds. */
static int read_user(const char *path, char **old, size_t *old_len, os_error *err)
{
	os_error rerr = { 0 };

	*old = NULL;
	*old_len = 0;
	if (read_file(path, 64u << 20, old, old_len, &rerr) < 0 && rerr.code != OS_EXIT_NOTFOUND) {
		*err = rerr;
		return -1;
	}
	os_error_clear(&rerr);
	return 0;
}

/* The backup of old, then the new text, each atomic. */
static int replace_user(const char *path, const char *old, size_t old_len, const char *text, size_t len,
			char **backup, os_error *err)
{
	if (old) {
		*backup = xasprintf("%s.openshell-backup", path);
		if (write_file_atomic(*backup, old, old_len, 0600, err) < 0)
			return -1;
	}
	return write_file_atomic(path, text, len, 0600, err);
}

int kubeconfig_update_user(const char *text, size_t len, char **path, char **backup, os_error *err)
{
	cleanup_free char *old = NULL;
	cleanup_free char *merged = NULL;
	cleanup_free char *dir = NULL;
	char *lock = NULL;
	size_t old_len = 0, merged_len;
	int rc = -1;

	*backup = NULL;
	if (!(*path = user_kubeconfig_path(err)))
		return -1;
	/* Write through a symlinked config to the file it names. */
	char *real = realpath(*path, NULL);
	if (real) {
		free(*path);
		*path = real;
	}
	if (strrchr(*path, '/')) {
		dir = xstrndup(*path, (size_t)(strrchr(*path, '/') - *path));
		if (*dir && mkdir_p(dir, 0700, err) < 0)
			return -1;
	}
	if (lock_user(*path, &lock, err) < 0)
		goto out;
	if (read_user(*path, &old, &old_len, err) < 0)
		goto out;
	if (kubeconfig_merge(old ? old : "", old_len, text, len, &merged, &merged_len, err) < 0) {
		os_error_wrap(err, "%s", *path);
		goto out;
	}
	rc = replace_user(*path, old, old_len, merged, merged_len, backup, err);
out:
	unlock_user(lock);
	return rc;
}

int kubeconfig_remove_user(const char *path, const char *name, int *changed, char **backup, os_error *err)
{
	cleanup_free char *old = NULL;
	cleanup_free char *kept = NULL;
	char *lock = NULL;
	size_t old_len = 0, kept_len;
	int rc = -1;

	*changed = 0;
	*backup = NULL;
	if (access(path, F_OK) < 0)
		return 0;   /* the user removed it: nothing of ours is left */
	if (lock_user(path, &lock, err) < 0)
		goto out;
	if (read_user(path, &old, &old_len, err) < 0)
		goto out;
	if (!old || kubeconfig_remove(old, old_len, name, &kept, &kept_len, changed, err) < 0) {
		rc = old ? -1 : 0;
		if (rc < 0)
			os_error_wrap(err, "%s", path);
		goto out;
	}
	rc = *changed ? replace_user(path, old, old_len, kept, kept_len, backup, err) : 0;
out:
	unlock_user(lock);
	return rc;
}
