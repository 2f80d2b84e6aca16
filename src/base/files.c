/* base/files.c - config paths, gateway locks, mkdir -p, full writes, atomic
 * replace, bounded reads. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/log.h"
#include "base/signals.h"
#include "base/xalloc.h"

int config_root(char **dir, os_error *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	/* XDG says a relative XDG_CONFIG_HOME is invalid and to be ignored. */
	if (xdg && xdg[0] == '/')
		*dir = xasprintf("%s/openshell", xdg);
	else if (home && home[0] == '/')
		*dir = xasprintf("%s/.config/openshell", home);
	else
		return os_error_set(err, OS_EXIT_FAILURE,
				    "cannot find the config directory: set HOME or XDG_CONFIG_HOME to an absolute path");
	return 0;
}

int gateway_state_dir(const char *name, char **dir, os_error *err)
{
	cleanup_free char *root = NULL;

	if (config_root(&root, err) < 0)
		return -1;
	*dir = xasprintf("%s/gateways/%s", root, name);
	return 0;
}

int gateway_lock(const char *name, long long deadline, os_error *err)
{
	cleanup_free char *root = NULL;
	cleanup_free char *dir = NULL;
	cleanup_free char *path = NULL;
	struct backoff b = { 0 };
	int fd, said = 0;

	if (config_root(&root, err) < 0)
		return -1;
	dir = xasprintf("%s/locks", root);
	path = xasprintf("%s/%s.lock", dir, name);
	if (mkdir_p(dir, 0700, err) < 0)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot open lock %s: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			int saved = errno;
			close(fd);
			return os_error_set(err, OS_EXIT_FAILURE, "cannot lock %s: %s", path, strerror(saved));
		}
		if (!said++)
			log_info("waiting for another openshell working on gateway '%s' (%s)", name, path);
		if (signals_stop_requested() || !backoff_wait(&b, deadline)) {
			close(fd);
			if (signals_stop_requested())
				return os_error_set(err, 128 + signals_pending(),
						    "interrupted while waiting for the lock of gateway '%s'", name);
			return os_error_set(err, OS_EXIT_TIMEOUT,
					    "gave up waiting for another openshell working on gateway '%s' (%s)",
					    name, path);
		}
	}
	return fd;
}

void gateway_unlock(int fd)
{
	if (fd >= 0)
		close(fd);   /* closing releases the flock */
}

int mkdir_p(const char *path, mode_t mode, os_error *err)
{
	cleanup_free char *p = NULL;

	if (!*path)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot create a directory of an empty path");
	p = xstrdup(path);

	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		struct stat st;
		if (mkdir(p, mode) < 0 && (errno != EEXIST || stat(p, &st) < 0 || !S_ISDIR(st.st_mode)))
			return os_error_set(err, OS_EXIT_FAILURE, "cannot create directory %s: %s", p,
					    errno == EEXIST ? "a file of that name is in the way" : strerror(errno));
		*s = c;
		if (!c)
			break;
	}
	return 0;
}

int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode,
		      os_error *err)
{
	cleanup_free char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	cleanup_free char *dircopy = xstrdup(path);
	int fd, dfd, saved;

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return os_error_set(err, OS_EXIT_FAILURE, "cannot write %s: %s", path, strerror(errno));
	if (fchmod(fd, mode) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot write %s: %s", path, strerror(saved));
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		saved = errno;
		unlink(tmp);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot write %s: %s", path, strerror(saved));
	}
	/* Make the rename itself durable: without it a crash can bring the
	 * old file back, so a failure is reported (the new file is in place). */
	dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0) {
		saved = errno;
		if (dfd >= 0)
			close(dfd);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot make %s durable (fsync of its directory): %s", path,
				    strerror(saved));
	}
	close(dfd);
	return 0;
}

int read_file(const char *path, size_t max, char **data, size_t *len, os_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	ssize_t r;
	char *buf;

	*data = NULL;
	if (fd < 0)
		return os_error_set(err, errno == ENOENT ? OS_EXIT_NOTFOUND : OS_EXIT_FAILURE,
				    "cannot read %s: %s", path, strerror(errno));
	buf = xmalloc(cap);
	do {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		r = read(fd, buf + n, cap - n - 1);
		if (r > 0)
			n += (size_t)r;
	} while ((r > 0 && n <= max) || (r < 0 && errno == EINTR));
	if (r < 0) {
		int saved = errno;
		free(buf);
		close(fd);
		return os_error_set(err, OS_EXIT_FAILURE, "cannot read %s: %s", path, strerror(saved));
	}
	close(fd);
	if (n > max) {   /* one byte past the limit is enough to know */
		free(buf);
		return os_error_set(err, OS_EXIT_FAILURE, "%s is larger than %zu bytes", path, max);
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

/* An anonymous file: a memfd, which costs no inode of a file system
 * (on ext4 an O_TMPFILE's inode is allocated and journalled), else
 * O_TMPFILE where the file system has it, else a mkstemp file unlinked at
 * once. Nothing is left on disk either way. */
int anonymous_file(os_error *err)
{
	const char *dir = getenv("TMPDIR");
	int fd = memfd_create("openshell", MFD_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char *tmpl = xasprintf("%s/openshell.XXXXXX", dir);

		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd >= 0)
			unlink(tmpl);
		free(tmpl);
	}
	if (fd < 0)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "cannot create a temporary file in %s: %s (set TMPDIR to a writable directory)",
				    dir, strerror(errno));
	return fd;
}
