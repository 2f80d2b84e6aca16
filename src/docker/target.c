/* docker/target.c - a Docker daemon as docker is pointed at it (see docker/target.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/target.h"

void docker_target_free(struct docker_target *t)
{
	free(t->context);
	free(t->endpoint);
	free(t->cert_path);
	memset(t, 0, sizeof(*t));
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void docker_target_copy(struct docker_target *to, const struct docker_target *from)
{
	*to = *from;
	to->context = dup_or_null(from->context);
	to->endpoint = dup_or_null(from->endpoint);
	to->cert_path = dup_or_null(from->cert_path);
}

struct docker_target *docker_target_dup(const struct docker_target *t)
{
	struct docker_target *d = NULL;

	if (t)
		docker_target_copy(d = xmalloc(sizeof(*d)), t);
	return d;
}

void docker_target_destroy(struct docker_target *t)
{
	if (t)
		docker_target_free(t);
	free(t);
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int docker_target_recorded(const struct docker_target *t)
{
	return t->context && t->endpoint;
}

int docker_target_same(const struct docker_target *a, const struct docker_target *b)
{
	return same_str(a->context, b->context) && same_str(a->endpoint, b->endpoint) &&
	       a->tls_recorded == b->tls_recorded &&
	       (!a->tls_recorded || (a->tls == b->tls && a->tls_verify == b->tls_verify &&
				     same_str(a->cert_path, b->cert_path)));
}

/* NAME as the environment openshell started with has it: set, or unset. */
static void env_as_started(struct strv *env, const char *name)
{
	const char *v = getenv(name);

	if (v)
		strv_pushf(env, "%s=%s", name, v);
	else
		strv_push(env, name);
}

void docker_target_env(const struct docker_target *t, struct strv *env)
{
	if (!t->context)
		return;   /* the process's target serves */
	/* A named context wins over DOCKER_HOST, as docker's own --context. */
	if (strcmp(t->context, "default") != 0) {
		strv_pushf(env, "DOCKER_CONTEXT=%s", t->context);
		strv_push(env, "DOCKER_HOST");
		return;
	}
	/* "default" alone is docker's default context, which takes DOCKER_HOST
	 * for its endpoint (docker/cli resolveDefaultDockerEndpoint): kept. */
	if (!t->endpoint) {
		strv_push(env, "DOCKER_CONTEXT=default");
		return;
	}
	strv_pushf(env, "DOCKER_HOST=%s", t->endpoint);
	strv_push(env, "DOCKER_CONTEXT");
	if (t->tls_recorded) {
		strv_push(env, t->tls ? "DOCKER_TLS=1" : "DOCKER_TLS");
		strv_push(env, t->tls_verify ? "DOCKER_TLS_VERIFY=1" : "DOCKER_TLS_VERIFY");
		if (t->cert_path)
			strv_pushf(env, "DOCKER_CERT_PATH=%s", t->cert_path);
		else
			strv_push(env, "DOCKER_CERT_PATH");
		return;
	}
	/* Not recorded: the user's own, as docker takes them from the
	 * environment, never those of another gateway's daemon. */
	env_as_started(env, "DOCKER_TLS");
	env_as_started(env, "DOCKER_TLS_VERIFY");
	env_as_started(env, "DOCKER_CERT_PATH");
}
