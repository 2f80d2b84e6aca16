/* docker/daemon.h - which Docker daemon the docker CLI talks to, resolved as it resolves it.
 *
 * The docker CLI picks its daemon (cli/command/cli.go resolveContextName
 * in docker/cli): DOCKER_HOST makes it the "default" context with that
 * host; else DOCKER_CONTEXT, else the config's currentContext
 * ($DOCKER_CONFIG/config.json, default ~/.docker), else "default", whose
 * host is the local socket. Only a named context needs a docker call
 * (`docker context inspect`) for its endpoint; the rest is read here.
 * openshell's --context gives docker DOCKER_CONTEXT and drops DOCKER_HOST,
 * so it resolves as docker's own --context does. Which daemon docker talks
 * to is the docker layer's target (docker/client.h: entries of each docker
 * child's environment), set below; openshell's own environment is never
 * changed.
 *
 * The default context's TLS comes from the environment too: DOCKER_TLS,
 * DOCKER_TLS_VERIFY (set to anything) and DOCKER_CERT_PATH, the directory
 * of ca.pem, cert.pem and key.pem (docker/cli cli/flags). A named
 * context keeps its own.
 */
#ifndef OPENSHELL_DOCKER_DAEMON_H
#define OPENSHELL_DOCKER_DAEMON_H

#include "base/error.h"

/* A daemon as docker is pointed at it, the one shape of "which daemon":
 * resolved from the environment or a command's options (struct
 * docker_daemon's), recorded in a gateway's metadata and a node's record,
 * and turned into a call's environment entries (docker_target_env()). */
struct docker_target {
	char *context;    /* "default" unless one is named; NULL: not recorded (older metadata) */
	char *endpoint;   /* unix:///var/run/docker.sock, ssh://user@host:22, tcp://host:2376 */
	int tls_recorded; /* the default context's TLS below was recorded */
	int tls, tls_verify; /* its DOCKER_TLS, DOCKER_TLS_VERIFY */
	char *cert_path;  /* its DOCKER_CERT_PATH, made absolute: a directory, never key material; or NULL */
};

void docker_target_copy(const struct docker_target *from, struct docker_target *to);
void docker_target_free(struct docker_target *t);

/* Do two targets name the same daemon, reached the same way? */
int docker_target_same(const struct docker_target *a, const struct docker_target *b);

/* For one call on T's daemon (docker/client.h's ON): the entries of
 * struct run_spec's env that name it (one without '=' unsets the
 * variable). A named context carries its own TLS material; "default" is
 * DOCKER_HOST's endpoint with the TLS settings recorded. */
struct strv;
void docker_target_env(const struct docker_target *t, struct strv *env);

/* The daemon docker resolves, with what openshell reads of its endpoint. */
struct docker_daemon {
	struct docker_target at; /* its context, endpoint and TLS */
	char *host;       /* the host of an ssh:// or tcp:// endpoint; NULL for a local socket */
	char *user;       /* its user (ssh://user@host), or NULL */
	char *port;       /* its port, as written, or NULL */
	int local;        /* a unix://, fd:// or npipe:// endpoint: this machine's daemon */
};

#define DOCKER_DEFAULT_ENDPOINT "unix:///var/run/docker.sock"

int docker_daemon_resolve(struct docker_daemon *d, os_error *err);

/* The daemon another command's option names, not the environment: HOST
 * (--docker-host, DOCKER_HOST's form, with the environment's TLS settings)
 * or else CONTEXT (--context, a context's name; NULL: "default"). */
int docker_daemon_named(const char *host, const char *context, struct docker_daemon *d, os_error *err);

/* Fill d's host, user, port and local from its endpoint, the one reading
 * of it; a malformed endpoint fails. */
int docker_daemon_parse_endpoint(struct docker_daemon *d, os_error *err);

/* The name this machine reaches an ssh:// endpoint's host by: ssh's own
 * HostName for it (`ssh -G`, which reads ~/.ssh/config as docker's ssh
 * does, and connects nowhere), so that an alias of ~/.ssh/config becomes
 * the address it stands for. NULL for other endpoints, or when ssh cannot
 * say. */
char *docker_daemon_ssh_hostname(const struct docker_daemon *d);

void docker_daemon_free(struct docker_daemon *d);

/* --context NAME: every docker call in that context (the target's
 * DOCKER_CONTEXT, DOCKER_HOST dropped, as docker's own --context wins over
 * it; "default" keeps it, as docker's default context takes it), and the
 * user's explicit choice for docker_daemon_follow(). */
int docker_daemon_choose(const char *context, os_error *err);

/* Was the daemon T names chosen by --context, or none chosen? */
int docker_daemon_chosen_fits(const struct docker_target *t);

/* A gateway lives on the daemon it was made on (its metadata's context,
 * endpoint and TLS): point docker there, whatever the environment says
 * now, unless --context chose another, which is a conflict naming both.
 * A named context is asked for its endpoint (`docker context inspect`):
 * one that now names another daemon than the recorded one is a conflict
 * too, naming both endpoints, and one that is gone a Docker error. No
 * context (metadata older than the record): nothing changes. */
int docker_daemon_follow(const char *gateway, const struct docker_target *t, os_error *err);

/* The same checks, but for the calls that name the daemon (docker/client.h's
 * ON): its entries into *ON (none where --context chose it or T records
 * none), the process's target unchanged. For a command that asks several
 * gateways' daemons side by side. */
int docker_daemon_follow_on(const char *gateway, const struct docker_target *t, struct strv *on, os_error *err);

/* Undo docker_daemon_follow(): the daemon of the environment openshell
 * started with (after --context). For a command that looks at several
 * gateways. */
void docker_daemon_unfollow(void);

#endif
