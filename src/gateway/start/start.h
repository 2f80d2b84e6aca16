/* gateway/start/start.h - the start flow: from a request to usable GPUs.
 *
 * gateway_start() runs design.md's call chain: preflight, reconcile an
 * existing gateway, make sure the image is there, create the network,
 * volume and container (with the GPU request), wait for the k3s API, write
 * the kubeconfig and metadata, and with --gpu wait until the node has
 * allocatable nvidia.com/gpu. Every step reports progress; every docker
 * call has a deadline within the overall one. A failure before the
 * container ever ran removes what this run created; a failure after it
 * keeps the gateway and says so, so its state can be inspected.
 */
#ifndef OPENSHELL_GATEWAY_START_H
#define OPENSHELL_GATEWAY_START_H

#include "base/error.h"
#include "base/strv.h"
#include "gateway/deploy/deploy.h"
#include "gateway/wait/phases.h"

struct start_result {
	const char *outcome;     /* "created", "resumed" or "running" (static) */
	char *container;
	char *image;             /* the image the gateway runs (a reused one's own) */
	char *server;            /* https://ADDR:PORT */
	char *kubeconfig;        /* path of the written kubeconfig */
	char *user_kubeconfig;   /* --update-kubeconfig: the file merged into */
	char *user_backup;       /* and the copy of what it held before */
	long long gpus;          /* allocatable nvidia.com/gpu (DRA: the GPUs the node's
	                          * ResourceSlices publish); -1 unknown or absent */
	struct strv mig;         /* allocatable MIG resources, as mig_resources() gives them */
	const char *gpu_mode;    /* "cdi" or "legacy" with GPUs, else NULL (static) */
	const char *gpu_injection; /* how Docker gives them: "cdi" (CDI mode, or --gpus on a
	                            * Docker that sends it through CDI, 29.2 and later) or
	                            * "hook" (the toolkit's); NULL without GPUs (static) */
	const char *mig_strategy; /* with GPUs: none, single or mixed (static) */
	const char *gpu_allocation; /* with GPUs: device-plugin or dra (static) */
	struct phases phases;    /* how long each phase took */
};

int gateway_start(const struct gateway_request *rq, struct start_result *r, os_error *err);
void start_result_free(struct start_result *r);

#endif
