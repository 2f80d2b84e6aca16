/* docker/daemon.h - which Docker daemon the docker CLI talks to, resolved as it resolves it.
 *
 * The docker CLI picks its daemon (cli/command/cli.go resolveContextName
 * in docker/cli): DOCKER_HOST makes it the "default" context with that
 * host; else DOCKER_CONTEXT, else the config's currentContext
 * ($DOCKER_CONFIG/config.json, default ~/.docker), else "default", whose
 * host is the local socket. Only a named context needs a docker call
 * (`docker context inspect`) for its endpoint; the rest is read here.
 * openshell's --context gives docker DOCKER_CONTEXT and drops DOCKER_HOST,
 * so it resolves as docker's own --context does: the process's target
 * (docker/client.h: entries of each docker child's environment), set once
 * by main before any command runs. A gateway's calls name the daemon it
 * lives on instead (docker_daemon_follow()); openshell's own environment
 * is never changed.
 *
 * The default context's TLS comes from the environment too: DOCKER_TLS,
 * DOCKER_TLS_VERIFY (set to anything) and DOCKER_CERT_PATH, the directory
 * of ca.pem, cert.pem and key.pem (docker/cli cli/flags). A named
 * context keeps its own.
 */
#ifndef OPENSHELL_DOCKER_DAEMON_H
#define OPENSHELL_DOCKER_DAEMON_H

#include "base/error.h"
#include "docker/target.h"

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

/* --context NAME: the process's target in that context (DOCKER_CONTEXT,
 * DOCKER_HOST dropped, as docker's own --context wins over it; "default"
 * keeps it, as docker's default context takes it), and the user's
 * explicit choice for docker_daemon_follow(). Once, by main, before any
 * call. */
int docker_daemon_choose(const char *context, os_error *err);

/* D for the daemon ON names (docker/client.h): NULL, the process's target
 * (docker_daemon_resolve()); else ON's (a gateway's own daemon), its TLS
 * settings the user's where the default context's were not recorded, as
 * resolve fills them. */
int docker_daemon_of(const struct docker_target *on, struct docker_daemon *d, os_error *err);

/* Was the daemon T names chosen by --context, or none chosen? */
int docker_daemon_chosen_fits(const struct docker_target *t);

/* A gateway lives on the daemon it was made on (its metadata's context,
 * endpoint and TLS), T: its calls go there, whatever the environment
 * says now, unless --context chose another, which is a conflict naming
 * both. A named context is asked for its endpoint (`docker context
 * inspect`): one that now names another daemon than the recorded one is
 * a conflict too, naming both endpoints, and one that is gone a Docker
 * error. *ON is T for the gateway's calls to name (docker/client.h's ON),
 * or NULL where --context chose it or T records none (metadata older than
 * the record): the process's target serves. */
int docker_daemon_follow(const char *gateway, const struct docker_target *t, const struct docker_target **on,
			 os_error *err);

#endif
