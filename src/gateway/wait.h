/* gateway/wait.h - waiting for a gateway to become ready, judged by state.
 *
 * Each wait polls with the bounded backoff of base/clock.h until its condition
 * holds or the deadline passes, and inspects the container on every round:
 * a container that stopped or restarted ends the wait at once, with its
 * exit code and last log lines. A timeout names what is still missing and
 * quotes what can explain it (the healthcheck's marker line, the device
 * plugin's and the Helm install job's logs). Timeouts keep the gateway.
 */
#ifndef OPENSHELL_GATEWAY_WAIT_H
#define OPENSHELL_GATEWAY_WAIT_H

#include "base/error.h"

struct wait_ctx {
	const char *container;   /* openshell-cluster-NAME */
	long long deadline;      /* clock_ms() time of the overall deadline */
	int timeout_ms;          /* the overall --timeout, for messages */
	long long restarts;      /* RestartCount when the waits began */
};

/* The k3s API answers `kubectl get --raw /readyz`. */
int wait_k3s_api(const struct wait_ctx *w, os_error *err);

/* The container runs (and has not restarted since the waits began). */
int wait_running(const struct wait_ctx *w, os_error *err);

/* --no-wait: the container runs and k3s has written its kubeconfig (it
 * does at once, before its API is ready); nothing else is waited for. */
int wait_kubeconfig_written(const struct wait_ctx *w, os_error *err);

/* Docker reports the container healthy (or it has no healthcheck). */
int wait_healthy(const struct wait_ctx *w, os_error *err);

/* RuntimeClass nvidia, the device plugin's pods all ready, and node
 * allocatable nvidia.com/gpu > 0; *gpus receives the count. */
int wait_gpus(const struct wait_ctx *w, long long *gpus, os_error *err);

/* The deadline of one docker call inside the waits' overall deadline: the
 * per-call default, cut to what is left. */
int wait_call_budget_ms(const struct wait_ctx *w);

/* GPUs off on a volume that had them: deleting the manifest file (as the
 * entrypoint does) uninstalls nothing on k3s, so delete the device
 * plugin's HelmChart through the API (the Helm controller then uninstalls
 * the release) and wait until its DaemonSet is gone. */
int wait_gpu_release_removed(const struct wait_ctx *w, os_error *err);

/* For docker calls after the deadline (rollback, diagnostics): a budget of
 * their own, so that cleaning up is never cut to nothing. */
int cleanup_budget_ms(void);

/* Was err the deadline cutting a call short? Then it is cleared, for the
 * caller to report the wait's timeout instead. */
int deadline_hit(const struct wait_ctx *w, os_error *err);

/* "timed out after 10m waiting for WHAT; …" with detail (may be NULL). */
int wait_timeout_error(const struct wait_ctx *w, const char *what, const char *detail,
		       os_error *err);

#endif
