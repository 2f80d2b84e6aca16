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

struct docker_daemon {
	char *context;    /* the context's name: "default" unless one is named */
	char *endpoint;   /* unix:///var/run/docker.sock, ssh://user@host:22, tcp://host:2376 */
	char *host;       /* the host of an ssh:// or tcp:// endpoint; NULL for a local socket */
	char *user;       /* its user (ssh://user@host), or NULL */
	char *port;       /* its port, as written, or NULL */
	int local;        /* a unix://, fd:// or npipe:// endpoint: this machine's daemon */
	int tls, tls_verify; /* the default context's DOCKER_TLS, DOCKER_TLS_VERIFY */
	char *cert_path;  /* its DOCKER_CERT_PATH, made absolute, or NULL */
};

/* Where a gateway's daemon is, as its metadata records it. */
struct docker_where {
	const char *context;    /* NULL: not recorded (older metadata) */
	const char *endpoint;   /* the context's endpoint when the gateway was made */
	int tls_recorded;       /* the default context's TLS below was recorded */
	int tls, tls_verify;
	const char *cert_path;  /* a directory's path, never key material; or NULL */
};

#define DOCKER_DEFAULT_ENDPOINT "unix:///var/run/docker.sock"

int docker_daemon_resolve(struct docker_daemon *d, os_error *err);

/* The daemon another command's option names, not the environment: HOST
 * (--docker-host, DOCKER_HOST's form, with the environment's TLS settings)
 * or else CONTEXT (--context, a context's name; NULL: "default"). */
int docker_daemon_named(const char *host, const char *context, struct docker_daemon *d, os_error *err);

/* Fill d's host, user, port and local from d->endpoint, the one reading
 * of it; a malformed endpoint fails. */
int docker_daemon_parse_endpoint(struct docker_daemon *d, os_error *err);

/* The name this machine reaches an ssh:// endpoint's host by: ssh's own
 * HostName for it (`ssh -G`, which reads ~/.ssh/config as docker's ssh
 * does, and connects nowhere), so that an alias of ~/.ssh/config becomes
 * the address it stands for. NULL for other endpoints, or when ssh cannot
 * say. */
char *docker_daemon_ssh_hostname(const struct docker_daemon *d);

/* The daemon the environment names now, as recorded for a gateway made
 * there (w points into d). */
void docker_daemon_where(const struct docker_daemon *d, struct docker_where *w);

/* Do two records name the same daemon, reached the same way? */
int docker_where_same(const struct docker_where *a, const struct docker_where *b);

void docker_daemon_free(struct docker_daemon *d);

/* --context NAME: every docker call in that context (the target's
 * DOCKER_CONTEXT, DOCKER_HOST dropped, as docker's own --context wins over
 * it; "default" keeps it, as docker's default context takes it), and the
 * user's explicit choice for docker_daemon_follow(). */
int docker_daemon_choose(const char *context, os_error *err);

/* Was the daemon W records chosen by --context, or none chosen? */
int docker_daemon_chosen_fits(const struct docker_where *w);

/* A gateway lives on the daemon it was made on (its metadata's context,
 * endpoint and TLS): point docker there, whatever the environment says
 * now, unless --context chose another, which is a conflict naming both.
 * A named context is asked for its endpoint (`docker context inspect`):
 * one that now names another daemon than the recorded one is a conflict
 * too, naming both endpoints, and one that is gone a Docker error. No
 * context (metadata older than the record): nothing changes. */
int docker_daemon_follow(const char *gateway, const struct docker_where *w, os_error *err);

/* The same checks, but for the calls that name the daemon (docker/client.h's
 * ON): its entries into *ON (none where --context chose it or W records
 * none), the process's target unchanged. For a command that asks several
 * gateways' daemons side by side. */
struct strv;
int docker_daemon_follow_on(const char *gateway, const struct docker_where *w, struct strv *on, os_error *err);

/* Undo docker_daemon_follow(): the daemon of the environment openshell
 * started with (after --context). For a command that looks at several
 * gateways. */
void docker_daemon_unfollow(void);

/* For one call on W's daemon (docker/client.h's ON): the entries of
 * struct run_spec's env that name it (one without '=' unsets the
 * variable). */
struct strv;
void docker_where_env(const struct docker_where *w, struct strv *env);

#endif
