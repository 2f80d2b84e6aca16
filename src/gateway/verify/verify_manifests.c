/* gateway/verify/verify_manifests.c - the objects verify makes: its pods, and under DRA their claims' template (see gateway/verify/verify_checks.h). */
#include "config.h"

#include <cjson/cJSON.h>

#include "gateway/gpu/allocation.h"
#include "gateway/verify/verify_checks.h"
#include "kube/objects.h"

/* nvidia-smi -L, its answer both printed (for `kubectl logs`) and written
 * to the termination message, which the kubelet puts into the pod's status
 * as the container ends (pkg/kubelet/kuberuntime/kuberuntime_container.go,
 * getTerminationMessage): the answer comes with the end, in the object
 * the watch of the pods says, with no call after it. Constants: nothing
 * of the user's is in them. The isolation pod's ends well whatever
 * nvidia-smi says (none found, or not there at all: no GPU either way). */
#define SMOKE_SCRIPT \
	"out=$(nvidia-smi -L 2>&1); s=$?; printf '%s\\n' \"$out\"; printf '%s\\n' \"$out\" >/dev/termination-log; exit $s"
#define ISOLATION_SCRIPT \
	"out=$(nvidia-smi -L 2>&1); printf '%s\\n' \"$out\"; printf '%s\\n' \"$out\" >/dev/termination-log; exit 0"

/* The template's request, and the pod's claim by that name. */
#define CLAIM_REQUEST "gpu"

/* One label set for each of a run's objects: its pods' watch and its
 * claims' select them by the instance. */
static void add_labels(cJSON *meta, const char *instance)
{
	cJSON *labels = cJSON_AddObjectToObject(meta, "labels");

	cJSON_AddStringToObject(labels, "app.kubernetes.io/managed-by", "openshell");
	cJSON_AddStringToObject(labels, "app.kubernetes.io/instance", instance);
}

/* The container asks for the claim of the pod's that the template makes. */
static void ask_by_claim(cJSON *spec, cJSON *ctr, const char *tmpl)
{
	cJSON *pc = cJSON_CreateObject(), *use = cJSON_CreateObject();

	cJSON_AddStringToObject(pc, "name", CLAIM_REQUEST);
	cJSON_AddStringToObject(pc, "resourceClaimTemplateName", tmpl);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "resourceClaims"), pc);
	cJSON_AddStringToObject(use, "name", CLAIM_REQUEST);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(ctr, "resources"), "claims"), use);
}

cJSON *verify_pod_manifest(const struct verify_pod_spec *ps)
{
	cJSON *m = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(m, "metadata");
	cJSON *spec, *ctr, *cmd;

	cJSON_AddStringToObject(m, "apiVersion", "v1");
	cJSON_AddStringToObject(m, "kind", "Pod");
	cJSON_AddStringToObject(meta, "name", ps->name);
	cJSON_AddStringToObject(meta, "namespace", SMOKE_NAMESPACE);
	add_labels(meta, ps->instance);
	spec = cJSON_AddObjectToObject(m, "spec");
	/* By the scheduler, as any pod: one that cannot run there pends with
	 * its reason, as the user's own would. */
	if (ps->node)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "nodeSelector"), "kubernetes.io/hostname", ps->node);
	/* Never: a finished pod must stay Succeeded, not restart. The nvidia
	 * RuntimeClass is what mounts the driver into the container. */
	cJSON_AddStringToObject(spec, "restartPolicy", "Never");
	cJSON_AddStringToObject(spec, "runtimeClassName", NVIDIA_RUNTIME_CLASS);
	ctr = cJSON_CreateObject();
	cJSON_AddStringToObject(ctr, "name", "smoke");
	cJSON_AddStringToObject(ctr, "image", ps->image);
	cmd = cJSON_AddArrayToObject(ctr, "command");
	cJSON_AddItemToArray(cmd, cJSON_CreateString("sh"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(cmd, cJSON_CreateString(ps->isolation ? ISOLATION_SCRIPT : SMOKE_SCRIPT));
	/* Should the shell fail before it writes the file, its log says why. */
	cJSON_AddStringToObject(ctr, "terminationMessagePolicy", "FallbackToLogsOnError");
	if (ps->resource)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(ctr, "resources"), "limits"),
					ps->resource, "1");
	if (ps->claim_template)
		ask_by_claim(spec, ctr, ps->claim_template);
	if (ps->privileged)
		cJSON_AddBoolToObject(cJSON_AddObjectToObject(ctr, "securityContext"), "privileged", 1);
	if (ps->isolation) {
		/* What every CUDA image sets: a pod that may name every GPU. */
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", "NVIDIA_VISIBLE_DEVICES");
		cJSON_AddStringToObject(e, "value", "all");
		cJSON_AddItemToArray(cJSON_AddArrayToObject(ctr, "env"), e);
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), ctr);
	return m;
}

static void add_subrequest(cJSON *list, const char *name, const char *device_class)
{
	cJSON *sub = cJSON_CreateObject();

	cJSON_AddStringToObject(sub, "name", name);
	cJSON_AddStringToObject(sub, "deviceClassName", device_class);
	cJSON_AddItemToArray(list, sub);
}

cJSON *verify_dra_template(const char *name, const char *instance)
{
	cJSON *t = cJSON_CreateObject(), *meta, *spec, *req, *alt;

	cJSON_AddStringToObject(t, "apiVersion", DRA_API_VERSION);
	cJSON_AddStringToObject(t, "kind", "ResourceClaimTemplate");
	meta = cJSON_AddObjectToObject(t, "metadata");
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace", SMOKE_NAMESPACE);
	add_labels(meta, instance);
	spec = cJSON_AddObjectToObject(t, "spec");
	/* Its claims carry these labels: the run's claims' watch selects them. */
	add_labels(cJSON_AddObjectToObject(spec, "metadata"), instance);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "name", CLAIM_REQUEST);
	/* A whole GPU, else a MIG device (a MIG-enabled GPU is published
	 * only as its MIG devices): Kubernetes' prioritized list, on since
	 * 1.34, takes the first subrequest that can be met. */
	alt = cJSON_AddArrayToObject(req, "firstAvailable");
	add_subrequest(alt, "whole", DRA_DEVICE_CLASS);
	add_subrequest(alt, "mig", DRA_MIG_DEVICE_CLASS);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "spec"), "devices"),
						    "requests"),
			     req);
	return t;
}
