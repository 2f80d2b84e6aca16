/* base/command.c - command lines as data: shown, named, looked up. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/command.h"
#include "base/xalloc.h"

static int is_shell_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_@%+=:,./-", *s))
			return 0;
	return 1;
}

char *command_string(const char *const *argv)
{
	size_t cap = 64, len = 0;
	char *s = xmalloc(cap);

	s[0] = '\0';
	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		size_t need = len + 4 * strlen(a) + 4;

		if (need > cap) {
			while (need > cap)
				cap *= 2;
			s = xrealloc(s, cap);
		}
		if (i)
			s[len++] = ' ';
		if (is_shell_safe(a)) {
			len += (size_t)sprintf(s + len, "%s", a);
			continue;
		}
		s[len++] = '\'';
		for (; *a; a++) {
			if (*a == '\'') {
				memcpy(s + len, "'\\''", 4);
				len += 4;
			} else {
				s[len++] = *a;
			}
		}
		s[len++] = '\'';
		s[len] = '\0';
	}
	return s;
}

char *command_short_name(const char *const *argv)
{
	const char *base = strrchr(argv[0], '/');

	base = base ? base + 1 : argv[0];
	if (argv[1] && argv[1][0] != '-')
		return xasprintf("%s %s", base, argv[1]);
	return xstrdup(base);
}

char *command_find(const char *name)
{
	const char *path = getenv("PATH");

	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		/* An empty element is the current directory, as execvp reads it. */
		char *cand = n ? xasprintf("%.*s/%s", (int)n, path, name) : xasprintf("./%s", name);
		struct stat st;

		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}
