/* gateway/state/roster.h - every gateway openshell knows, each looked up on the daemon it lives on.
 *
 * `gateway list` needs all gateways at once, and they may live on several
 * Docker daemons (docker/daemon.h). The names come from the state
 * directory, which needs no daemon, and from the daemon the environment
 * names now: its containers labelled as openshell's, whose metadata may
 * be gone. The gateways are grouped by the daemon their metadata records
 * (without a record: the environment's); each daemon gets one
 * `docker inspect` of its gateways' containers, the daemons side by side.
 * A daemon that cannot be asked (it does not answer, its context is gone
 * or names another daemon now) leaves its gateways with daemon_error set,
 * state unknown, and one error for them all; the other gateways are
 * looked up all the same. With --context, only the gateways that live in
 * that context are gathered.
 */
#ifndef OPENSHELL_GATEWAY_ROSTER_H
#define OPENSHELL_GATEWAY_ROSTER_H

#include <stddef.h>

#include "base/error.h"
#include "base/strv.h"
#include "gateway/state/lookup.h"

struct roster {
	struct gateway *gw;      /* sorted by name */
	size_t n;
	os_error *errors;        /* one per daemon that could not be asked about its gateways */
	size_t n_errors;
	struct strv warnings;    /* what was left out, and why: a container openshell did not
	                          * make, a silent daemon that holds none of the gateways */
};

/* Fails only when the state directory cannot be read. */
int roster_gather(struct roster *r, os_error *err);
void roster_free(struct roster *r);

#endif
