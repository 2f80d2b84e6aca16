/* docker/target.h - a Docker daemon as docker is pointed at it: the one shape of "which daemon".
 *
 * A target is a context's name and endpoint, with the default context's
 * TLS settings from the environment (DOCKER_TLS, DOCKER_TLS_VERIFY,
 * DOCKER_CERT_PATH: flags and a path, no key material). docker/daemon.h
 * resolves one as the docker CLI would; a gateway's metadata and a node's
 * record keep one; docker/client.h's calls name one (ON) through the
 * environment entries made here, over the process's target (which they
 * replace wholly: --context's choice does not leak into a call that
 * names another daemon); the environment openshell started with is never
 * changed.
 */
#ifndef OPENSHELL_DOCKER_TARGET_H
#define OPENSHELL_DOCKER_TARGET_H

struct docker_target {
	char *context;    /* "default" unless one is named; NULL: not recorded (older metadata) */
	char *endpoint;   /* unix:///var/run/docker.sock, ssh://user@host:22, tcp://host:2376 */
	int tls_recorded; /* the default context's TLS below was recorded */
	int tls, tls_verify; /* its DOCKER_TLS, DOCKER_TLS_VERIFY */
	char *cert_path;  /* its DOCKER_CERT_PATH, made absolute: a directory, never key material; or NULL */
};

/* A container by its name on the daemon ON names: what every call about
 * one container (kube/'s `docker exec NAME kubectl`, its inspect) takes,
 * so that the call goes where the container is. ON NULL: the process's
 * target (the environment's daemon, as --context leaves it). */
struct docker_ctr {
	const struct docker_target *on;
	const char *name;
};

void docker_target_free(struct docker_target *t);

/* TO as a copy of FROM, its strings its own (docker_target_free()). */
void docker_target_copy(struct docker_target *to, const struct docker_target *from);

/* A copy of T that outlives it (NULL: none), for a value that keeps the
 * daemon it was found on; docker_target_destroy() frees it (NULL fine). */
struct docker_target *docker_target_dup(const struct docker_target *t);
void docker_target_destroy(struct docker_target *t);

/* Does T name a daemon: a context and its endpoint (older metadata records
 * neither)? */
int docker_target_recorded(const struct docker_target *t);

/* Do two targets name the same daemon, reached the same way? */
int docker_target_same(const struct docker_target *a, const struct docker_target *b);

/* For one call on T's daemon (docker/client.h's ON): the entries of
 * struct run_spec's env that name it (one without '=' unsets the
 * variable). A named context carries its own TLS material; "default" is
 * DOCKER_HOST's endpoint with the TLS settings recorded, or where none
 * were, those of the environment openshell started with. A context's
 * name alone (no endpoint: --context as typed) names it as docker's
 * --context does. None for a target without a context. */
struct strv;
void docker_target_env(const struct docker_target *t, struct strv *env);

#endif
