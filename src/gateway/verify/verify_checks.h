/* gateway/verify/verify_checks.h - the checks of verify, for its own files (gateway/verify/verify.h is the interface).
 *
 * verify.c runs the checks in order; verify_request.c has the ones about
 * the container's own GPU request, which need Docker alone.
 */
#ifndef OPENSHELL_GATEWAY_VERIFY_CHECKS_H
#define OPENSHELL_GATEWAY_VERIFY_CHECKS_H

#include <cjson/cJSON.h>

#include "base/deadline.h"
#include "base/error.h"
#include "base/strv.h"
#include "gateway/check/check.h"
#include "gateway/gpu/gpus.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"
#include "kube/watch.h"

/* The request: CDI devices of the NVIDIA spec, or Docker's nvidia driver
 * with the capabilities the chain needs; the evidence says which. */
void verify_device_request(const struct gateway *gw, struct check *c);

/* The container sees exactly the GPUs its request means on the Docker
 * host, by UUID. One look in the container (GPUS_LOOK_BEFORE, in the
 * exec of verify's pods, or of its kubectl get) has its nvidia-smi and
 * the driver's list of the host's GPUs (gateway/gpu/gpu_driver.h). Where that
 * list cannot say (a gateway whose image leaves the toolkit's tmpfs over
 * a selection), a throwaway container lists the host's GPUs instead,
 * started as soon as that is known. verify_gpus_seen() reads the look's
 * output TEXT into *seen, into *devices what the device plugin
 * advertises for them as nvidia.com/gpu under the gateway's MIG
 * strategy, and *rest where the text after the look begins;
 * verify_gpus_judge() then sets the check from the host's. -1 only when
 * they cannot ask. verify_gpus_free() drops what is left. */
struct gpu_looks {
	struct run_child *host_call;
	struct run_child *mig_call;    /* verify_mig_start()'s container, or NULL */
	struct host_gpus mine, host;   /* host: from the driver's list, or the probe's */
	char *sel;                     /* the container's --gpus, for messages, */
	const struct gpus *want;       /* gw->gpus, or NULL when it does not read */
};
int verify_gpus_seen(const struct gateway *gw, struct gpu_looks *l, const char *text, const char **rest,
		     struct strv *seen, int *devices, os_error *err);
int verify_gpus_judge(const struct gateway *gw, struct gpu_looks *l, const struct strv *seen, struct check *c,
		      os_error *err);
void verify_gpus_free(struct gpu_looks *l);

/* The MIG capabilities (/dev/nvidia-caps/nvidia-capN) the gateway can
 * open, part of the GPU request's check: only those of its own GPUs
 * (the driver's capabilities/gpuN/mig, from the look), and where --gpus
 * names MIG devices exactly those an unprivileged container given that
 * selection gets from the NVIDIA runtime, the same way (its driver or
 * CDI). verify_mig_start() starts that container (none without MIG
 * devices in the selection; -1 only when it cannot start);
 * verify_mig_judge() adds to C's evidence and turns a passed C to a
 * fail where the gateway holds more or fewer. */
int verify_mig_start(const struct gateway *gw, struct gpu_looks *l, os_error *err);
void verify_mig_judge(struct gpu_looks *l, struct check *c);

/* verify's pods, which go in together and are waited for side by side:
 * the smoke pod asks for one nvidia.com/gpu, or RESOURCE (a MIG profile's),
 * runs nvidia-smi -L, and must succeed naming exactly one GPU (and the
 * MIG device of that profile); the isolation pod asks for none, names
 * every one in NVIDIA_VISIBLE_DEVICES=all (as any CUDA image does) and
 * must see none; the privileged pod is the smoke pod, privileged (as the
 * device plugin's MPS daemon is), and must see exactly its one GPU too.
 * A NULL check is not run. Both run IMAGE on NODE; they get
 * TIMEOUT_MS to end, and are deleted afterwards unless KEEP. */
#define VERIFY_MAX_NODES 8
#define VERIFY_PODS (4 + VERIFY_MAX_NODES)
/* A smoke pod of its own on each GPU node of the gateway's agents
 * (gateway node add): one GPU asked on that node, judged as the smoke
 * pod is, into CHECK. */
struct verify_node_pod {
	const char *node;
	struct check check;
	/* Its pod's end, kept to judge it again once its node's GPUs are
	 * known (on WSL2 its one device is every one of them): NULL before. */
	char *pod, *phase, *out;
	long long code;
};
struct verify_pod_plan {
	const char *node;        /* the node they run on (its kubernetes.io/hostname), or NULL */
	struct verify_node_pod *nodes;   /* the agents' smoke pods, N_NODES of them */
	size_t n_nodes;
	struct check *smoke;
	const char *resource;
	struct check *isolation;
	struct check *privileged;   /* a privileged smoke pod, judged as the smoke pod */
	/* Under DRA (set by DRA): a pod asking nvidia.com/gpu, which the
	 * driver's DeviceClass serves; the smoke and privileged pods ask by a
	 * claim, whose device is judged by the node's SLICES (a List). */
	struct check *extended;
	int dra;
	const cJSON *slices;
	int device_gpus;         /* the GPUs one device of the plugin's is: 0 or 1, one; on
	                          * WSL2 every GPU the gateway sees (its one device, all) */
	const char *image;
	int timeout_ms;
	int keep;
	/* The cluster get found RuntimeClass nvidia: one it waited for k3s to
	 * make, which the pods' create, made before it, may have lacked. */
	int runtime_class;
	/* A fixed script (GPUS_LOOK_BEFORE) run in the pods' exec, beside
	 * their create, or NULL: verify_pods_look() gives its output. */
	const char *look;
};

/* The pods are made before the looks that tell whether each is wanted,
 * so that their run overlaps the looks: verify_pods_start() starts the
 * create of PLAN's pods and a watch of them, in one docker exec (NULL,
 * err set, when it cannot); verify_pods() then judges the pods of the
 * final PLAN, whose checks must be the same or NULL (a pod ruled out by
 * the looks is neither waited for nor judged); with VP NULL it makes them
 * first. A create the API refuses fails each wanted pod's check. The
 * checks are set; -1 only when they could not run. verify_pods() and
 * verify_pods_drop() (no judging, for when the checks cannot run) delete
 * the pods and free VP. PLAN must outlive VP. */
struct verify_pods;
struct verify_pods *verify_pods_start(const struct gateway *gw, const struct verify_pod_plan *plan, os_error *err);
int verify_pods(const struct gateway *gw, struct verify_pods *vp, const struct verify_pod_plan *plan, os_error *err);
void verify_pods_drop(const struct gateway *gw, struct verify_pods *vp);
/* What the plan's LOOK printed, once it has (the create ended too): the
 * pods' exec has room for it while they start. NULL with err when the
 * exec ended without it. Owned by VP. */
const char *verify_pods_look(struct verify_pods *vp, os_error *err);

/* A finished pod's verdict from its PHASE, exit CODE and OUT (its
 * nvidia-smi -L) into C: the smoke pod POD (asking for RESOURCE, a MIG
 * profile's, or NULL for nvidia.com/gpu) named exactly one GPU, and of
 * that profile, or the DEVICE_GPUS (> 1) its one device is; the isolation
 * pod (RESOURCE and DEVICE_GPUS unused) named none. */
void verify_judge_smoke(const char *pod, const char *resource, int device_gpus, const char *phase, long long code,
			const char *out, struct check *c);
void verify_judge_isolation(const char *pod, const char *resource, int device_gpus, const char *phase,
			    long long code, const char *out, struct check *c);
/* The privileged pod: as the smoke pod, in a privileged container, which
 * containerd gives every device it sees unless its runtime says
 * privileged_without_host_devices: more than one GPU names that cause. */
void verify_judge_privileged(const char *pod, const char *resource, int device_gpus, const char *phase,
			     long long code, const char *out, struct check *c);

/* The node-gpus check: each agent with GPUs (gateway/state/node_record.h) gets
 * a smoke pod of its own on its node (PLAN's nodes, which point into VN),
 * whose GPU must be one its agent sees on its own host (its nvidia-smi -L,
 * looked at beside the pods); on a WSL2 host (/dev/dxg) the pod's one
 * device is every GPU its agent sees. verify_nodes_start() reads the agents and
 * starts the looks (-1 only when the nodes' files cannot be read);
 * verify_nodes_judge() sets C once the pods are judged (with GPU nodes
 * only): a fail when any of them does. */
struct verify_nodes {
	struct node_records rs;
	struct verify_node_pod pods[VERIFY_MAX_NODES];
	const struct node_record *rec[VERIFY_MAX_NODES];
	struct run_child *looks[VERIFY_MAX_NODES];
	char *look_error[VERIFY_MAX_NODES];
	size_t n;
};
int verify_nodes_start(const struct gateway *gw, struct verify_nodes *vn, os_error *err);
void verify_nodes_judge(struct verify_nodes *vn, struct check *c);
void verify_nodes_free(struct verify_nodes *vn);

/* verify's pods live in this namespace. */
#define SMOKE_NAMESPACE "default"

/* What a pod of gateway container CTR says of itself: the scheduler's
 * reason it is Pending (NULL when none; POD its object); the kubelet's
 * last warning about it (a sandbox it cannot make; owned, or NULL); what
 * its container said (owned): the termination message the finished pod
 * carries (its container status CS), or, from a cluster that gave none (a
 * kubelet without the file, an image whose shell never ran), its log. */
const char *verify_pod_unschedulable(const cJSON *pod);
char *verify_pod_warning(const struct docker_ctr *ctr, const char *pod);
char *verify_pod_output(const struct docker_ctr *ctr, const char *pod, const cJSON *cs);

/* The smoke pod's GPU must be one of those seen. */
void verify_smoke_gpu(const struct strv *seen, struct check *c);
/* The node's allocatable nvidia.com/gpu in LIST, under the device plugin
 * (gateway/verify/verify_allocatable.c): each of the container's GPUS
 * devices (PER_DEVICE > 1: WSL2's one device, every GPU) times the
 * sharing's replicas, none unhealthy, or the MIG resources of the mixed
 * strategy, into C; *SCHEDULABLE when a pod could get one, *RESOURCE
 * (owned) the MIG resource the smoke pod asks for under the mixed
 * strategy. */
void verify_allocatable(const struct gateway *gw, int gpus, int per_device, const cJSON *list, struct check *c,
			char **resource, int *schedulable);

/* The UUID a pod's verdict names ("… (UUID: GPU-…)"), owned, or NULL. */
char *verify_evidence_uuid(const struct check *c);

/* The manifests of verify's objects (gateway/verify/verify_manifests.c).
 * A pod NAME of the run INSTANCE (its label) runs IMAGE on NODE (NULL:
 * any) under the nvidia runtime: the smoke script, nvidia-smi -L with its
 * answer in the termination message, asking one RESOURCE (NULL: none) or
 * through a claim from CLAIM_TEMPLATE, PRIVILEGED or not; or the
 * isolation script, which asks for none with NVIDIA_VISIBLE_DEVICES=all.
 * verify_dra_template() is the ResourceClaimTemplate NAME, labelled as the
 * run's pods (and so are its claims, one per pod), asking for a whole GPU
 * of DeviceClass gpu.nvidia.com, else a MIG device of mig.nvidia.com. */
struct verify_pod_spec {
	const char *name, *node, *instance, *image;
	const char *resource;
	const char *claim_template;
	int privileged;
	int isolation;
};
cJSON *verify_pod_manifest(const struct verify_pod_spec *ps);
cJSON *verify_dra_template(const char *name, const char *instance);

/* The pods' create (gateway/verify/verify_create.c), the pods' watch's
 * THEN: verify_create_script() makes the List on its stdin, the LOOK (or
 * NULL) beside it, within REQUEST_S, and says the first object's
 * resourceVersion last, which verify_created_since() takes off THEN's
 * TEXT (NULL when it is not there). A create refused because the API
 * was still starting (what it SAID; RUNTIME_CLASS: the pods name one,
 * which k3s makes a moment after its API) is verify_create_early(),
 * and is made again by verify_create_again_script(): without the look,
 * objects that already exist no failure, the version that of TMPL (the
 * run's ResourceClaimTemplate, or NULL: none said). */
char *verify_create_script(int request_s, const char *look);
char *verify_created_since(char *text);
int verify_create_early(const char *said, int runtime_class);
char *verify_create_again_script(int request_s, const char *tmpl);

/* Under DRA (gateway/verify/verify_dra.c). The node's ResourceSlices of
 * NVIDIA's driver in LIST must publish the GPUs the gateway SEES (when
 * known), by UUID, into C; *SCHEDULABLE when they publish any. */
void verify_dra_slices(const cJSON *list, const char *node, const struct strv *seen, struct check *c,
		       int *schedulable);

/* What a pod's claim was allocated: the device of the driver's, once
 * the claim was reserved for the pod. verify_dra_claim_read() keeps it
 * in GOT from one state of CLAIM (1 when it did). */
struct verify_claim {
	char *claim, *pool, *device;
};
int verify_dra_claim_read(const cJSON *claim, const char *pod, struct verify_claim *got);
void verify_claim_free(struct verify_claim *got);

/* The claims of verify's pods that ask by one (verify_claims_add(), the
 * names the caller's), from a watch of the claims labelled SELECTOR: a
 * pod's claim is deleted once the pod is done, so what it was allocated
 * is read from each state the watch says, not after. The watch runs in a
 * docker exec of its own, through BY and a few seconds past it, once
 * verify_claims_from() has said from where: the resourceVersion RV before
 * any claim of the run's was made, whose every state the API replays
 * then, or NULL to list them as they are (a claim gone by then is
 * missed); verify_claims_again() reaps it once it has ended and starts it
 * (again) while that lasts, a second after its last start at the soonest,
 * which verify_claims_due() says (0: it runs, or is not to start), for
 * the caller, which serves it beside its own children, to wake then;
 * verify_claims_await() serves it until each of PODS has its claim, a few
 * seconds at most; verify_claims_of() is a pod's (empty when none came). */
struct verify_claims {
	struct kube_watch watch;
	const struct docker_ctr *ctr;
	const struct deadline *by;
	int armed;                /* verify_claims_from() was called: the watch may start */
	long long started_ms;     /* the watch's last start */
	char *error;              /* why it last ended or failed to start, or NULL */
	const char *pod[VERIFY_PODS];
	struct verify_claim got[VERIFY_PODS];
	size_t n;
};
void verify_claims_init(struct verify_claims *vc, const struct docker_ctr *ctr, const char *selector,
			const struct deadline *by);
void verify_claims_add(struct verify_claims *vc, const char *pod);
void verify_claims_from(struct verify_claims *vc, const char *rv);
void verify_claims_again(struct verify_claims *vc);
long long verify_claims_due(const struct verify_claims *vc);
void verify_claims_await(struct verify_claims *vc, const char *const *pods, size_t n);
const struct verify_claim *verify_claims_of(const struct verify_claims *vc, const char *pod);
void verify_claims_free(struct verify_claims *vc);

/* A claim pod's verdict (C, a pass) turns to a fail unless the device
 * its claim GOT is the GPU the pod saw (its UUID in SLICES; WATCH_ERROR,
 * or NULL, why the claims' watch may have missed it);
 * verify_dra_judge_extended()'s unless the pod (its object) asking
 * nvidia.com/gpu was served by a claim of DRA's (DRAExtendedResource). */
void verify_dra_judge_claim(const char *pod, const struct verify_claim *got, const char *watch_error,
			    const cJSON *slices, struct check *c);
void verify_dra_judge_extended(const cJSON *pod, struct check *c);

#endif
