/* docker/container.h - a gateway's container as `docker inspect` describes it.
 *
 * container_parse_inspect() reads the JSON array docker prints into the
 * few facts the commands act on, tolerating missing fields (older daemons,
 * images without a healthcheck); container_inspect() runs docker for it and
 * reports a missing container as exists = 0, not as an error.
 */
#ifndef OPENSHELL_DOCKER_CONTAINER_H
#define OPENSHELL_DOCKER_CONTAINER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/names.h"
#include "base/strv.h"

/* The argv head of `docker rm` for a gateway's or an agent's container:
 * forced, so a running one goes too, and with its anonymous volumes. The
 * image's VOLUME lines make one for each path no mount covers at every run
 * (moby daemon/create_unix.go, createContainerOSSpecificSettings), and a
 * removal without --volumes leaves each behind, unreferenced, with a node's
 * state in it. Named volumes stay (moby daemon/delete.go); removing the
 * gateway's own volume is each caller's decision. */
#define DOCKER_RM "rm", "--force", "--volumes"

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
	char *health_line;    /* the latest probe's last line: the healthcheck's marker */
	int gpu_request;      /* HostConfig.DeviceRequests asks for GPUs */
	int gpu_cdi;          /* as CDI devices (driver "cdi", nvidia.com/gpu=…) */
	char *gpu_request_desc; /* "driver=nvidia count=all capabilities=…", or NULL */
	char *gpu_driver;     /* of that request: "nvidia", "cdi", or "" for Docker's default */
	long long gpu_count;  /* -1: all; 0 with gpu_devices set: by device ID */
	char *gpu_devices;    /* DeviceIDs, comma-joined, or "" (CDI: without nvidia.com/gpu=) */
	char *gpus_label;     /* label org.openshell.gpus: a CDI gateway's --gpus */
	char *api_host;       /* label org.openshell.api-host, or NULL (made before it) */
	char *advertise;      /* its k3s's --advertise-address, or NULL */
	int runtimes_disabled; /* its k3s's --disable names runtimes: no RuntimeClasses */
	char *node_network;   /* label org.openshell.node-network, or NULL (made before it) */
	char *mig_strategy;   /* Config.Env OPENSHELL_MIG_STRATEGY, or NULL: none */
	char *gpu_allocation; /* Config.Env OPENSHELL_GPU_ALLOCATION, or NULL: the device plugin */
	char *gpu_caps;       /* every capability named, comma-joined */
	char *api_host_ip;    /* where 6443/tcp is published: HostIp, HostPort */
	int api_host_port;    /* 0 when not published */
	char *managed_by;     /* label org.openshell.managed-by */
	char *gateway;        /* label org.openshell.gateway */
	char *image;          /* Config.Image */
	char *smoke_image;    /* label org.openshell.smoke-image (from the image) */
	char *started_at;     /* State.StartedAt, the daemon's RFC 3339 time */
	struct strv health_test; /* Config.Healthcheck.Test as Docker runs it: argv */
};

int container_parse_inspect(const char *json, size_t len, struct gw_container *c, os_error *err);

/* One object of that array (`docker inspect` of several containers). */
int container_parse_object(const cJSON *obj, struct gw_container *c, os_error *err);
/* `docker inspect` of the container CTR names, on its daemon. */
struct docker_ctr;
int container_inspect(const struct docker_ctr *ctr, struct gw_container *c, os_error *err);
void container_free(struct gw_container *c);

/* Run container CTR's healthcheck now, as Docker runs it (an exec of C's
 * health_test), for an answer before Docker's next probe: 1 when it
 * passed, 0 when it failed, -1 when it could not run (no healthcheck, a
 * stopped container, docker's error). *line gets the last line it printed,
 * where the healthcheck puts its marker (owned; NULL when none). */
int container_probe_health(const struct docker_ctr *ctr, const struct gw_container *c, char **line, os_error *err);

/* Whose the container is (base/names.h's labels_owner()); OWNER_ABSENT
 * when it does not exist. */
enum owner container_owner(const struct gw_container *c, const char *gateway);

/* Whose an object with LABELS (an object, or null: none) is, by the same rule. */
enum owner docker_labels_owner(const cJSON *labels, const char *gateway);

/* Whose a network or volume on ON's daemon (docker/client.h) is, by the
 * same rule. */
struct docker_target;
int docker_object_owner(const struct docker_target *on, const char *type, const char *object, const char *gateway,
			int timeout_ms, enum owner *out, os_error *err);

#endif
