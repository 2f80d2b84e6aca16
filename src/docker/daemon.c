/* docker/daemon.c - the daemon the docker CLI talks to (see docker/daemon.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/daemon.h"

/* The config's currentContext, or NULL (none, or no readable config: the
 * docker CLI then uses "default" too). */
static char *current_context(void)
{
	const char *dir = getenv("DOCKER_CONFIG"), *home = getenv("HOME");
	cleanup_free char *path = NULL, *text = NULL;
	os_error err = { 0 };
	char *name = NULL;
	size_t len;
	cJSON *cfg;

	if (dir && *dir)
		path = xasprintf("%s/config.json", dir);
	else if (home && *home)
		path = xasprintf("%s/.docker/config.json", home);
	if (!path || read_file(path, 1 << 20, &text, &len, &err) < 0) {
		os_error_clear(&err);
		return NULL;
	}
	if ((cfg = json_parse(text, len, path, &err))) {
		const char *cur = json_str(cfg, "currentContext");
		name = cur && *cur ? xstrdup(cur) : NULL;
		cJSON_Delete(cfg);
	}
	os_error_clear(&err);
	return name;
}

/* A named context's docker endpoint, as `docker context inspect` gives it. */
static int context_endpoint(struct docker_daemon *d, os_error *err)
{
	const char *args[] = { "context", "inspect", "--format", "{{json .Endpoints.docker.Host}}", "--", d->context,
			       NULL };
	struct run_result res = { 0 };
	cJSON *host = NULL;
	int rc = -1;

	if (docker_run_ok(args, NULL, 0, 0, &res, err) < 0)
		goto out;
	if (!(host = json_parse(res.out, res.out_len, "docker context inspect output", err)))
		goto out;
	if (!cJSON_IsString(host) || !*host->valuestring) {
		os_error_set(err, OS_EXIT_DOCKER, "docker context '%s' has no docker endpoint", d->context);
		goto out;
	}
	d->endpoint = xstrdup(host->valuestring);
	rc = 0;
out:
	cJSON_Delete(host);
	run_result_free(&res);
	return rc;
}

int docker_daemon_parse_endpoint(struct docker_daemon *d, os_error *err)
{
	const char *e = d->endpoint, *at, *end;
	static const char *const local[] = { "unix://", "fd://", "npipe://" };

	free(d->host);
	d->host = NULL;
	d->local = 0;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (strncmp(e, local[i], strlen(local[i])) == 0) {
			d->local = 1;
			return 0;
		}
	if (strncmp(e, "ssh://", 6) == 0)
		e += 6;
	else if (strncmp(e, "tcp://", 6) == 0)
		e += 6;
	else
		return os_error_set(err, OS_EXIT_DOCKER,
				    "Docker endpoint '%s' is none openshell knows (unix://, ssh:// or tcp://)", d->endpoint);
	if ((at = strchr(e, '@')) && at < e + strcspn(e, "/"))
		e = at + 1;   /* ssh://user@host */
	/* [v6]:port, host:port, host */
	if (*e == '[' && (end = strchr(e, ']')))
		d->host = xstrndup(e + 1, (size_t)(end - e - 1));
	else
		d->host = xstrndup(e, strcspn(e, ":/"));
	if (!*d->host)
		return os_error_set(err, OS_EXIT_DOCKER, "Docker endpoint '%s' names no host", d->endpoint);
	return 0;
}

int docker_daemon_resolve(struct docker_daemon *d, os_error *err)
{
	const char *host = getenv("DOCKER_HOST"), *ctx = getenv("DOCKER_CONTEXT");

	memset(d, 0, sizeof(*d));
	if (host && *host) {
		d->context = xstrdup("default");
		d->endpoint = xstrdup(host);
	} else {
		d->context = ctx && *ctx ? xstrdup(ctx) : current_context();
		if (!d->context)
			d->context = xstrdup("default");
		if (strcmp(d->context, "default") == 0)
			d->endpoint = xstrdup(DOCKER_DEFAULT_ENDPOINT);
		else if (context_endpoint(d, err) < 0)
			goto fail;
	}
	if (docker_daemon_parse_endpoint(d, err) == 0)
		return 0;
fail:
	docker_daemon_free(d);
	return -1;
}

/* --context's name, and the environment before any gateway was followed. */
static char *chosen;
static struct {
	int saved;
	char *host, *context;
} before;

static void restore(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static void remember(void)
{
	const char *h = getenv("DOCKER_HOST"), *c = getenv("DOCKER_CONTEXT");

	if (before.saved)
		return;
	before.saved = 1;
	before.host = h ? xstrdup(h) : NULL;
	before.context = c ? xstrdup(c) : NULL;
}

int docker_daemon_choose(const char *context, os_error *err)
{
	if (!*context)
		return os_error_set(err, OS_EXIT_USAGE, "--context needs a context's name (see 'docker context ls')");
	free(chosen);
	chosen = xstrdup(context);
	setenv("DOCKER_CONTEXT", context, 1);
	/* docker's default context takes DOCKER_HOST for its endpoint (docker/cli
	 * resolveDefaultDockerEndpoint); a named one wins over it. */
	if (strcmp(context, "default") != 0)
		unsetenv("DOCKER_HOST");
	return 0;
}

int docker_daemon_follow(const char *gateway, const char *context, const char *endpoint, os_error *err)
{
	if (!context || !endpoint)
		return 0;
	if (chosen) {
		/* "default" is DOCKER_HOST's endpoint, else the local socket. */
		const char *host = getenv("DOCKER_HOST");
		const char *now = host && *host ? host : DOCKER_DEFAULT_ENDPOINT;

		if (strcmp(chosen, context) == 0 && (strcmp(context, "default") != 0 || strcmp(endpoint, now) == 0))
			return 0;
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' was made in Docker context '%s' (%s), not '%s'; drop --context to reach it there",
				    gateway, context, endpoint, chosen);
	}
	remember();
	/* A named context carries its own TLS material: name it. "default"
	 * was DOCKER_HOST's endpoint, or the local socket. */
	if (strcmp(context, "default") != 0) {
		setenv("DOCKER_CONTEXT", context, 1);
		unsetenv("DOCKER_HOST");
	} else {
		setenv("DOCKER_HOST", endpoint, 1);
		unsetenv("DOCKER_CONTEXT");
	}
	return 0;
}

void docker_daemon_unfollow(void)
{
	if (!before.saved)
		return;
	restore("DOCKER_HOST", before.host);
	restore("DOCKER_CONTEXT", before.context);
}

void docker_daemon_free(struct docker_daemon *d)
{
	free(d->context);
	free(d->endpoint);
	free(d->host);
	memset(d, 0, sizeof(*d));
}
