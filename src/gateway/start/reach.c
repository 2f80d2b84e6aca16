/* gateway/start/reach.c - where clients reach a gateway's API (see gateway/start/reach.h). */
#include "config.h"

#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "gateway/start/reach.h"

/* A daemon reached through ssh://root@127.0.0.1 is this machine's all the
 * same. The host is judged as written: an ssh alias whose HostName is a
 * loopback address may well be a tunnel to another machine. */
static int on_this_machine(const struct docker_daemon *d)
{
	return d->local || bind_is_loopback(d->host) || strcmp(d->host, "localhost") == 0;
}

/* Where clients reach the daemon's host: for an ssh alias, the address it
 * stands for (other clients, and kubectl, know nothing of ~/.ssh/config). */
static char *reached_at(const struct docker_daemon *d)
{
	char *name = docker_daemon_ssh_hostname(d);

	return name ? name : xstrdup(d->host);
}

void reach_sans(struct deploy_plan *p, const struct docker_daemon *d, struct strv *sans)
{
	p->daemon_host = d->local ? NULL : d->host;
	if (!bind_is_wildcard(p->bind))
		return;
	if (d->local) {
		deploy_host_addresses(p->bind, sans);
	} else {
		cleanup_free char *at = reached_at(d);
		size_t first = sans->n;

		/* the alias too: harmless, and right where it resolves */
		strv_push(sans, at);
		if (strcmp(at, d->host) != 0)
			strv_push(sans, d->host);
		p->daemon_host = sans->v[first];
	}
	p->host_sans = sans;
}

int reach_check(const struct deploy_plan *p, const struct docker_daemon *d, os_error *err)
{
	if (on_this_machine(d) || !bind_is_loopback(p->bind))
		return 0;
	if (!p->req->bind) {
		cleanup_free char *at = reached_at(d);
		return os_error_set(err, OS_EXIT_USAGE,
				    "the Docker daemon is on %s (%s), whose loopback, where the API is published by default, this machine cannot reach: give --bind with an address of %s this machine reaches, or --bind 0.0.0.0 (the kubeconfig then names %s), or --bind 127.0.0.1 to reach it through an ssh tunnel of your own",
				    d->host, d->at.endpoint, d->host, at);
	}
	log_warn("the API is published on the loopback of %s, the Docker daemon's host: reach it through a tunnel (ssh -L PORT:%s:PORT %s, PORT as the kubeconfig names it)",
		 d->host, p->bind, d->host);
	return 0;
}
