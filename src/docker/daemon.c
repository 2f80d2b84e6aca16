/* docker/daemon.c - the daemon the docker CLI talks to (see docker/daemon.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/strv.h"
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
static int context_endpoint(const char *context, char **endpoint, os_error *err)
{
	const char *args[] = { "context", "inspect", "--format", "{{json .Endpoints.docker.Host}}", "--", context,
			       NULL };
	struct run_result res = { 0 };
	cJSON *host = NULL;
	int rc = -1;

	if (docker_run_ok(NULL, args, NULL, 0, 0, &res, err) < 0)
		goto out;
	if (!(host = json_parse(res.out, res.out_len, "docker context inspect output", err)))
		goto out;
	if (!cJSON_IsString(host) || !*host->valuestring) {
		os_error_set(err, OS_EXIT_DOCKER, "docker context '%s' has no docker endpoint", context);
		goto out;
	}
	*endpoint = xstrdup(host->valuestring);
	rc = 0;
out:
	cJSON_Delete(host);
	run_result_free(&res);
	return rc;
}

/* DOCKER_CERT_PATH as docker reads it from here, for use from anywhere. */
static char *absolute_path(const char *path)
{
	char *real = realpath(path, NULL);

	if (real)
		return real;
	if (path[0] == '/')
		return xstrdup(path);
	cleanup_free char *cwd = getcwd(NULL, 0);
	return cwd ? xasprintf("%s/%s", cwd, path) : xstrdup(path);
}

/* Where a variable is read from: the docker target's view (docker_env),
 * or the environment openshell started with (getenv). */
typedef const char *env_reader(const char *name);

static const char *process_env(const char *name)
{
	return getenv(name);
}

static int env_set(env_reader *env, const char *name)
{
	const char *v = env(name);

	return v && *v;
}

int docker_daemon_parse_endpoint(struct docker_daemon *d, os_error *err)
{
	const char *e = d->at.endpoint, *end, *at, *close, *colon;
	static const char *const local[] = { "unix://", "fd://", "npipe://" };

	free(d->host);
	free(d->user);
	free(d->port);
	d->host = d->user = d->port = NULL;
	d->local = 0;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (strncmp(e, local[i], strlen(local[i])) == 0) {
			d->local = 1;
			return 0;
		}
	if (strncmp(e, "ssh://", 6) != 0 && strncmp(e, "tcp://", 6) != 0)
		return os_error_set(err, OS_EXIT_DOCKER,
				    "Docker endpoint '%s' is none openshell knows (unix://, ssh:// or tcp://)", d->at.endpoint);
	/* [user@]host[:port][/path], the host perhaps [v6] */
	e += 6;
	end = e + strcspn(e, "/");
	if ((at = memchr(e, '@', (size_t)(end - e)))) {
		d->user = xstrndup(e, (size_t)(at - e));
		e = at + 1;
	}
	if (*e == '[' && (close = memchr(e, ']', (size_t)(end - e)))) {
		d->host = xstrndup(e + 1, (size_t)(close - e - 1));
		colon = close + 1 < end && close[1] == ':' ? close + 1 : NULL;
	} else {
		colon = memchr(e, ':', (size_t)(end - e));
		d->host = xstrndup(e, (size_t)((colon ? colon : end) - e));
	}
	if (colon && colon + 1 < end)
		d->port = xstrndup(colon + 1, (size_t)(end - colon - 1));
	if (!*d->host)
		return os_error_set(err, OS_EXIT_DOCKER, "Docker endpoint '%s' names no host", d->at.endpoint);
	return 0;
}

/* The daemon of HOST (DOCKER_HOST's form) or else CONTEXT (NULL: the
 * config's current one), as the docker CLI resolves them. */
static int resolve(const char *host, const char *ctx, env_reader *env, struct docker_daemon *d, os_error *err)
{
	struct docker_target *t = &d->at;

	memset(d, 0, sizeof(*d));
	if (host && *host) {
		t->context = xstrdup("default");
		t->endpoint = xstrdup(host);
	} else {
		t->context = ctx && *ctx ? xstrdup(ctx) : current_context();
		if (!t->context)
			t->context = xstrdup("default");
		if (strcmp(t->context, "default") == 0)
			t->endpoint = xstrdup(DOCKER_DEFAULT_ENDPOINT);
		else if (context_endpoint(t->context, &t->endpoint, err) < 0)
			goto fail;
	}
	/* A named context carries its own TLS material; the default one's
	 * is the environment's, recorded. */
	if (strcmp(t->context, "default") == 0) {
		t->tls_recorded = 1;
		t->tls = env_set(env, "DOCKER_TLS");
		t->tls_verify = env_set(env, "DOCKER_TLS_VERIFY");
		t->cert_path = env_set(env, "DOCKER_CERT_PATH") ? absolute_path(env("DOCKER_CERT_PATH")) : NULL;
	}
	if (docker_daemon_parse_endpoint(d, err) == 0)
		return 0;
fail:
	docker_daemon_free(d);
	return -1;
}

int docker_daemon_resolve(struct docker_daemon *d, os_error *err)
{
	return resolve(docker_env("DOCKER_HOST"), docker_env("DOCKER_CONTEXT"), docker_env, d, err);
}

int docker_daemon_named(const char *host, const char *context, struct docker_daemon *d, os_error *err)
{
	if (host && !*host)
		return os_error_set(err, OS_EXIT_USAGE, "--docker-host needs a daemon's address, e.g. ssh://user@gpu-box");
	if (context && !*context)
		return os_error_set(err, OS_EXIT_USAGE, "--context needs a context's name (see 'docker context ls')");
	/* The user's own TLS settings, as openshell started. */
	return resolve(host, context ? context : "default", process_env, d, err);
}

#define SSH_CONFIG_TIMEOUT_MS 5000

char *docker_daemon_ssh_hostname(const struct docker_daemon *d)
{
	struct strv argv = { 0 };
	struct run_result res = { 0 };
	os_error err = { 0 };
	char *name = NULL;

	if (strncmp(d->at.endpoint, "ssh://", 6) != 0 || !d->host)
		return NULL;
	strv_pushv(&argv, (const char *const[]){ "ssh", "-G", NULL });
	if (d->user && *d->user)
		strv_pushv(&argv, (const char *const[]){ "-l", d->user, NULL });
	if (d->port)
		strv_pushv(&argv, (const char *const[]){ "-p", d->port, NULL });
	strv_pushv(&argv, (const char *const[]){ "--", d->host, NULL });
	struct run_spec spec = { .argv = strv_argv(&argv), .timeout_ms = SSH_CONFIG_TIMEOUT_MS };
	if (run_command_ok(&spec, &res, &err) == 0)
		for (char *line = strtok(res.out, "\n"); line && !name; line = strtok(NULL, "\n"))
			if (strncmp(line, "hostname ", 9) == 0 && line[9])
				name = xstrdup(line + 9);
	if (!name)
		log_verbose("ssh -G %s said no hostname (%s): the endpoint's host is taken as written", d->host,
			    err.msg ? err.msg : "none in its output");
	os_error_clear(&err);
	run_result_free(&res);
	strv_free(&argv);
	return name;
}


/* --context's name: a gateway's daemon must be the one it chose. */
static char *chosen;

int docker_daemon_choose(const char *context, os_error *err)
{
	struct strv env = { 0 };

	if (!*context)
		return os_error_set(err, OS_EXIT_USAGE, "--context needs a context's name (see 'docker context ls')");
	free(chosen);
	chosen = xstrdup(context);
	docker_target_env(&(struct docker_target){ .context = chosen }, &env);
	docker_process_target_set(strv_argv(&env));
	strv_free(&env);
	return 0;
}

int docker_daemon_chosen_fits(const struct docker_target *t)
{
	/* "default" is DOCKER_HOST's endpoint, else the local socket. */
	const char *host = docker_env("DOCKER_HOST");
	const char *now = host && *host ? host : DOCKER_DEFAULT_ENDPOINT;

	if (!chosen || !docker_target_recorded(t))
		return 1;
	return strcmp(chosen, t->context) == 0 && (strcmp(t->context, "default") != 0 || strcmp(t->endpoint, now) == 0);
}

/* A named context is a name: it may have been pointed at another daemon
 * since the gateway was made there, which docker would then talk to. */
static int context_still_there(const char *gateway, const struct docker_target *t, os_error *err)
{
	cleanup_free char *now = NULL;

	if (context_endpoint(t->context, &now, err) < 0) {
		err->code = OS_EXIT_DOCKER;
		os_error_wrap(err, "gateway '%s' was made in Docker context '%s' (%s), which docker cannot read", gateway,
			      t->context, t->endpoint);
		cleanup_free char *fix = xasprintf("make it again with 'docker context create %s --docker host=%s'",
						   t->context, t->endpoint);
		return os_error_add_fix(err, fix);
	}
	if (strcmp(now, t->endpoint) == 0)
		return 0;
	return os_error_set(err, OS_EXIT_CONFLICT,
			    "gateway '%s' was made in Docker context '%s' on %s, but the context now names %s; point it back with 'docker context update %s --docker host=%s', or give the other daemon a context of its own",
			    gateway, t->context, t->endpoint, now, t->context, t->endpoint);
}


int docker_daemon_follow(const char *gateway, const struct docker_target *t, const struct docker_target **on,
			 os_error *err)
{
	*on = NULL;
	if (!docker_target_recorded(t))
		return 0;
	if (!docker_daemon_chosen_fits(t))
		return os_error_set(err, OS_EXIT_CONFLICT,
				    "gateway '%s' was made in Docker context '%s' (%s), not '%s'; drop --context to reach it there",
				    gateway, t->context, t->endpoint, chosen);
	if (strcmp(t->context, "default") != 0 && context_still_there(gateway, t, err) < 0)
		return -1;
	*on = chosen ? NULL : t;
	return 0;
}

int docker_daemon_of(const struct docker_target *on, struct docker_daemon *d, os_error *err)
{
	if (!on)
		return docker_daemon_resolve(d, err);
	/* Recorded without TLS (older metadata): the user's settings, as
	 * docker takes them, recorded from here on. */
	if (on->context && strcmp(on->context, "default") == 0 && on->endpoint && *on->endpoint && !on->tls_recorded)
		return resolve(on->endpoint, NULL, process_env, d, err);
	memset(d, 0, sizeof(*d));
	docker_target_copy(&d->at, on);
	if (docker_daemon_parse_endpoint(d, err) == 0)
		return 0;
	docker_daemon_free(d);
	return -1;
}

void docker_daemon_free(struct docker_daemon *d)
{
	docker_target_free(&d->at);
	free(d->host);
	free(d->user);
	free(d->port);
	memset(d, 0, sizeof(*d));
}
