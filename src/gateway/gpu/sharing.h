/* gateway/gpu/sharing.h - GPUs shared between pods: `--gpu-sharing`.
 *
 * `time-slicing:N` makes the NVIDIA device plugin advertise each GPU N
 * times (its config's sharing.timeSlicing.resources[].replicas), so that
 * allocatable nvidia.com/gpu becomes GPUs x N and N pods may hold one GPU
 * in turns, without memory or fault isolation. The config reaches the
 * chart as k3s's HelmChartConfig for the plugin's HelmChart: its
 * valuesContent (the chart's config.map with one entry, named as
 * config.default) is laid over the HelmChart's own values, and a change
 * makes the Helm controller upgrade the release, on a running gateway too.
 * `none` deletes the HelmChartConfig. `mps:N` shares the same way
 * through the CUDA Multi-Process Service (sharing.mps): pods run on a GPU
 * at once, each limited to its share of memory and compute. The chart runs
 * the MPS control daemon only on nodes labelled nvidia.com/mps.capable=true
 * (GPU Feature Discovery's label; the gateway runs no GFD and sets it
 * itself), and the plugin registers the replicas once that daemon is up.
 *
 * Under --gpu-allocation dra there are no replicas: pods share a GPU by
 * using one ResourceClaim, and NVIDIA's DRA driver sets the GPU up for it
 * as the claim's opaque GpuConfig asks (sharing.strategy TimeSlicing and
 * its interval, or MPS and its mpsConfig). `time-slicing` or `mps`,
 * without a count, turns on the driver's feature gate for it
 * (TimeSlicingSettings or MPSSupport, off by default), through a
 * HelmChartConfig of the driver's HelmChart as above; without it the
 * driver refuses a claim that asks. `none` deletes it.
 */
#ifndef OPENSHELL_GATEWAY_SHARING_H
#define OPENSHELL_GATEWAY_SHARING_H

#include <cjson/cJSON.h>

#include "base/deadline.h"
#include "base/error.h"
#include "docker/target.h"
#include "gateway/gpu/mig.h"

#define SHARING_MAX_REPLICAS 1024
/* MPS serves at most 48 clients on a GPU, 16 on one before compute
 * capability 7.5 (the plugin's cmd/mps-control-daemon/mps/device.go,
 * maxClients and assertReplicas). */
#define MPS_MAX_REPLICAS 48
#define MPS_MAX_REPLICAS_OLD 16
#define MPS_FULL_CLIENTS_CC 75   /* compute capability x 10 from which 48 apply */
#define SHARING_CONFIG_NAME "openshell"   /* the config.map entry */
#define MPS_NODE_LABEL "nvidia.com/mps.capable"

/* The replicas of a request that names no sharing (gateway/deploy/deploy.h). */
#define SHARING_UNSET 0

struct sharing {
	int replicas;   /* 1: none; SHARING_UNSET: not asked */
	int mps;        /* with replicas > 1, or per_claim: MPS, not time-slicing */
	int per_claim;  /* replicas 1: each claim asks (DRA's), the driver's gate on */
};

/* The DRA driver's feature gates for the sharing a claim may ask for. */
#define DRA_GATE_TIME_SLICING "TimeSlicingSettings"
#define DRA_GATE_MPS "MPSSupport"

/* The DRA driver's gate of S's sharing per claim, "" for none. */
const char *sharing_dra_gate(const struct sharing *s);

/* S when it was asked for, NULL when its replicas are SHARING_UNSET. */
const struct sharing *sharing_asked(const struct sharing *s);

/* "none", "time-slicing" or "mps" (static). */
const char *sharing_mode_name(const struct sharing *s);

/* "none", "time-slicing:N" or "mps:N" (N >= 2), or per claim (DRA's)
 * "time-slicing" or "mps"; a usage error otherwise. */
int sharing_parse(const char *text, struct sharing *s, os_error *err);

/* "none", "time-slicing:N", "mps:N", "time-slicing" or "mps" (owned). */
char *sharing_string(const struct sharing *s);

/* The chart's values for S, as YAML (owned): the device plugin's config,
 * or per claim the DRA driver's featureGates. */
int sharing_values(const struct sharing *s, char **yaml, os_error *err);

/* The HelmChartConfig manifest (JSON, for kubectl apply -f -) carrying
 * those values for the HelmChart named RELEASE in kube-system (owned). */
int sharing_manifest(const struct sharing *s, const char *release, char **json, os_error *err);

/* Read the sharing back from a HelmChartConfig's valuesContent, either
 * chart's: replicas 1 when it configures none. */
int sharing_from_values(const char *yaml, struct sharing *s);

/* The sharing the HelmChartConfig of RELEASE sets (replicas 1 without one). */
int sharing_read(const struct docker_ctr *ctr, const char *release, int timeout_ms, struct sharing *s, os_error *err);

/* The same from a List of several types that holds the HelmChartConfigs. */
void sharing_from_list(const cJSON *list, const char *release, struct sharing *s);

/* The device plugin refuses MPS with the mixed strategy (main.go: "using
 * --mig-strategy=mixed is not supported with MPS"). */
#define MPS_MIXED_REFUSED "--gpu-sharing mps:N cannot go with --mig-strategy mixed: the device plugin does not share MIG devices by MPS; use time-slicing:N, or another --mig-strategy"

/* Is S sharing by MPS under the mixed strategy? */
int mps_with_mixed(const struct sharing *s, enum mig_strategy m);

struct host_gpus;
struct strv;

/* Must the GPUs be looked at before S is made (MPS under the single
 * strategy, which MIG devices cannot take, or for more clients than a GPU
 * before compute capability 7.5 takes)? */
int sharing_needs_gpus(const struct sharing *s, enum mig_strategy m);

/* What MPS cannot do on the GPUs of H that UUIDS names (NULL: all), refused
 * before the device plugin would crash-loop on it: MIG devices under the
 * single strategy (the plugin's "sharing using MPS is not supported for
 * MIG devices"), more than 16 clients on a GPU before compute capability
 * 7.5 (its control daemon's "maximum allowed replicas exceeded"). 0 when
 * the GPUs take S. */
int sharing_check_gpus(const struct sharing *s, enum mig_strategy m, const struct host_gpus *h,
		       const struct strv *uuids, os_error *err);

/* What a sharing change, or the mixed strategy, makes the node advertise. */
struct sharing_want {
	int changed;             /* a change was asked for; else any count will do */
	long long allocatable;   /* with it: nvidia.com/gpu (0 when no whole GPU is left) */
	int mps;                 /* by MPS: once the chart's MPS control daemon is up */
	long long mig;           /* mixed: the MIG devices of the container's GPUs, each
				  * profile a resource the plugin registers apart */
	const char *node;        /* the container's node, which holds them (its agents'
				  * nodes have MIG devices of their own) */
};

/* --gpu-sharing S on gateway container CTR: apply (or, for none, delete)
 * the HelmChartConfig, label the node for MPS (or not), and say what
 * allocatable it makes: the devices the plugin advertises for the
 * container's GPUs under the MIG strategy (gateway/gpu/gpus.h) x replicas. S
 * NULL: nothing to change, *want all 0 but its MIG devices under mixed.
 * The node it labels may come until BY passes, each call within it. */
int sharing_configure(const struct docker_ctr *ctr, const struct sharing *s, enum mig_strategy mig, const char *release,
		      const struct deadline *by, struct sharing_want *want, os_error *err);

/* Per claim, under DRA: apply S (or, for none, delete) as the
 * HelmChartConfig of the DRA driver's HelmChart RELEASE; S NULL: nothing
 * to change. The GPU wait then waits for the driver's DaemonSet to roll
 * out with its gates. */
int sharing_configure_dra(const struct docker_ctr *ctr, const struct sharing *s, const char *release,
			  const struct deadline *by, os_error *err);

#endif
