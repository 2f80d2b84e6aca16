/* gateway/wait/wait.h - waiting for a gateway to become ready, judged by state.
 *
 * Each wait is told of a change rather than polling for it, where k3s and
 * kubectl offer that: the k3s API by following the container's log until
 * k3s says its API runs (wait.c), the GPUs by kubectl watches of the nodes
 * and the device plugin's DaemonSets (wait_gpus.c), so that the change
 * that makes the last fact hold ends the wait with no call after it.
 * Beside the streams a slow tick looks at the state itself, a fallback
 * for what they cannot say; where neither applies, a wait polls with the
 * bounded backoff of base/clock.h. The log stream goes on through the GPU
 * wait, and ends when the container stops (or restarts): then the
 * container is inspected, and one that stopped or restarted ends the wait
 * with its exit code and last log lines. A timeout names what is still
 * missing and quotes what can explain it (the healthcheck's marker line,
 * the device plugin's and the Helm install job's logs). Timeouts keep the
 * gateway.
 */
#ifndef OPENSHELL_GATEWAY_WAIT_H
#define OPENSHELL_GATEWAY_WAIT_H

#include "base/deadline.h"
#include "base/error.h"
#include "base/strv.h"
#include "docker/container.h"
#include "docker/target.h"
#include "gateway/wait/phases.h"

struct wait_follow;
struct wait_ctx {
	struct docker_ctr ctr;   /* openshell-cluster-NAME on its daemon */
	struct deadline by;      /* the overall deadline, each call capped at docker's per-call limit */
	int timeout_ms;          /* the overall --timeout, for messages */
	long long restarts;      /* RestartCount when the waits began */
	int fresh;               /* this run created the container */
	int new_volume;          /* and its volume: no cluster state is older than it */
	struct phases *phases;   /* marked as facts are seen, or NULL */
	/* Kept by the waits (wait_release() frees them): */
	struct wait_follow *follow;   /* the container's log, followed since the API wait */
	char *started_at;        /* the container's State.StartedAt, once inspected */
};

#define WAIT_LOG_TAIL_LINES 20   /* log lines a failure quotes */

/* The k3s API answers `kubectl get --raw /readyz`. The container's log,
 * followed for k3s's word on it, goes on being followed as a sign of
 * life (wait_follower()) until wait_release(). */
int wait_k3s_api(struct wait_ctx *w, os_error *err);

/* That log stream, to serve beside the GPU wait's own calls (run_wait_any):
 * it ends only when the container stops. NULL when the API wait did not
 * need to follow the log (its API answered at once), or once ended. */
struct run_child *wait_follower(const struct wait_ctx *w);

/* It ended: reaped, and the container looked at (wait_check_alive()):
 * -1 with err saying how it stopped or restarted, 0 when it runs after
 * all (the log stream ended for a reason of docker's). */
int wait_follower_ended(struct wait_ctx *w, os_error *err);

/* Stop following the log; free what the waits kept. */
void wait_release(struct wait_ctx *w);

/* The container was restarting when the waits began (Docker's restart
 * policy, after a crash): wait until that restart has run it. */
int wait_pending_restart(const struct wait_ctx *w, os_error *err);

/* The container runs (and has not restarted since the waits began). */
int wait_running(const struct wait_ctx *w, os_error *err);

/* --no-wait: the container runs and k3s has written its kubeconfig (it
 * does at once, before its API is ready); nothing else is waited for. */
int wait_kubeconfig_written(const struct wait_ctx *w, os_error *err);

/* A file of the container the GPU wait reads in the exec of one of its
 * watches, ahead of kubectl, and hands to GOT once (DONE then set; TEXT
 * NULL when missing or empty), before the wait can end: one docker call
 * fewer than a read of its own. GOT's failure ends the wait. */
struct wait_file {
	const char *path;
	int (*got)(void *ctx, const char *text, os_error *err);
	void *ctx;
	int done;
};

/* RuntimeClass nvidia, the device plugin's pods all ready, and node
 * allocatable nvidia.com/gpu > 0 (or MIG devices of the mixed strategy,
 * nvidia.com/mig-*), or exactly what a --gpu-sharing change makes (WANT,
 * gateway/gpu/sharing.h); *gpus receives the count (-1: absent), *mig the MIG
 * resources (mig_resources(), owned). FILE: see above, or NULL. */
struct sharing_want;
int wait_gpus(struct wait_ctx *w, const struct sharing_want *want, struct wait_file *file, long long *gpus,
	      struct strv *mig, os_error *err);

/* Under --gpu-allocation dra: the nvidia runtime, the DRA driver's kubelet
 * plugin's pods all ready, and ResourceSlices of driver gpu.nvidia.com
 * in which NODE publishes exactly the GPUs UUIDS names (any, when it names
 * none); *gpus receives how many it publishes. GATE: after a sharing
 * change, the driver's feature gate of sharing its DaemonSet is to roll
 * out with ("" for none), or NULL. FILE: see above, or NULL. */
int wait_dra_gpus(struct wait_ctx *w, const char *node, const struct strv *uuids, const char *gate,
		  struct wait_file *file, long long *gpus, os_error *err);

/* Inspect the container into *c (to be freed either way); fail, quoting
 * its last log lines, if it stopped or restarted since the waits began. */
int wait_check_alive(const struct wait_ctx *w, struct gw_container *c, os_error *err);

/* A tick's next delay: *delay doubled, at most `most`; returns it. */
int wait_next_delay(int *delay, int most);

/* A call in the container failed with *err: when the container has
 * stopped or restarted meanwhile, that is the news, and *err becomes
 * wait_check_alive()'s report of it (1); else 0, *err as it was. */
int wait_container_news(const struct wait_ctx *w, os_error *err);

/* After a kubectl call of the waits failed with *err: 1, *err cleared,
 * when it is worth another try after a step of B (a failure or timeout of
 * the API while the container runs as it did: k3s restarting its API, a
 * 5xx); 0 otherwise, with *err kept, or replaced by the container's own
 * news (it stopped, it restarted), or cleared when the deadline cut the
 * call (for the caller's timeout report). */
struct backoff;
int wait_retry_api(const struct wait_ctx *w, struct backoff *b, os_error *err);

/* GPUs off, or another allocation, on a volume that had them: deleting
 * the manifest file (as the entrypoint does) uninstalls nothing on k3s, so
 * delete the HelmCharts of BY[0..N-1] (at most 8) through the API in one
 * call (the Helm controller then uninstalls each release) and wait until
 * the DaemonSets of those that were there are gone. */
struct gpu_allocator;
int wait_gpu_release_removed(const struct wait_ctx *w, const struct gpu_allocator *const *by, int n, os_error *err);

/* For docker calls after the deadline (rollback, diagnostics): a budget of
 * their own, so that cleaning up is never cut to nothing. */
int cleanup_budget_ms(void);

/* Was err the deadline cutting a call short (deadline_cut())? Then it is
 * cleared, for the caller to report the wait's timeout instead. */
int wait_cut(const struct wait_ctx *w, os_error *err);

/* "timed out after 10m waiting for WHAT; …" with detail (may be NULL). */
int wait_timeout_error(const struct wait_ctx *w, const char *what, const char *detail,
		       os_error *err);

#endif
