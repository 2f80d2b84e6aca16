/* container.h - a gateway's container as `docker inspect` describes it.
 *
 * container_parse_inspect() reads the JSON array docker prints into the
 * few facts the commands act on, tolerating missing fields (older daemons,
 * images without a healthcheck); container_inspect() runs docker for it and
 * reports a missing container as exists = 0, not as an error.
 */
#ifndef OPENSHELL_CONTAINER_H
#define OPENSHELL_CONTAINER_H

#include <stddef.h>

#include "error.h"

struct gw_container {
	int exists;
	char *id;
	char *status;         /* created|running|paused|restarting|removing|exited|dead */
	int running;
	int restarting;
	long long exit_code;
	long long restart_count;
	char *state_error;    /* State.Error, e.g. the runtime's complaint */
	char *health;         /* starting|healthy|unhealthy; NULL: no healthcheck */
	char *health_output;  /* output of the latest health probe */
	int gpu_request;      /* HostConfig.DeviceRequests asks for GPUs */
	char *gpu_request_desc; /* "driver=nvidia count=all capabilities=…", or NULL */
	char *managed_by;     /* label org.openshell.managed-by */
	char *gateway;        /* label org.openshell.gateway */
	char *image;          /* Config.Image */
};

int container_parse_inspect(const char *json, size_t len, struct gw_container *c, os_error *err);
int container_inspect(const char *name, struct gw_container *c, os_error *err);
void container_free(struct gw_container *c);

/* Does stderr from docker say the object does not exist? */
int docker_says_missing(const char *stderr_text);

#endif
