/* gateway/start/reach.h - where clients reach a gateway's API: for a Docker daemon here, or on another machine.
 *
 * The API is published on the daemon's machine. On this one, a wildcard
 * --bind is reached at this host's addresses; on another (an ssh:// or
 * tcp:// endpoint), at that machine's name, and its loopback, the default
 * --bind, is out of this client's reach. The name is the endpoint's host,
 * or for an alias of ~/.ssh/config the HostName ssh gives it, which
 * clients that know nothing of ssh resolve too. The API's certificate
 * names what the kubeconfig's server says (deploy_api_address()), and the
 * alias as well.
 */
#ifndef OPENSHELL_GATEWAY_REACH_H
#define OPENSHELL_GATEWAY_REACH_H

#include "base/error.h"
#include "base/strv.h"
#include "docker/daemon.h"
#include "gateway/deploy/deploy.h"

/* Set p->daemon_host, and with a wildcard bind the certificate's extra
 * names in sans (p->host_sans then points at it). */
void reach_sans(struct deploy_plan *p, const struct docker_daemon *d, struct strv *sans);

/* A new gateway on another machine's daemon: the default loopback bind is
 * refused (a usage error naming --bind); one asked for is warned about. */
int reach_check(const struct deploy_plan *p, const struct docker_daemon *d, os_error *err);

#endif
