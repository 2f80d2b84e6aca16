/* gateway/state/gpu_claims.c - who holds a GPU under DRA (see gateway/state/gpu_claims.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/state/gpu_claims.h"
#include "kube/objects.h"

int gpu_claims_published(const cJSON *list, const char *node, const char *uuid)
{
	struct strv pub = { 0 };
	int has;

	dra_published_uuids(list, node, &pub, NULL);
	has = uuid && strv_has(&pub, uuid);
	strv_free(&pub);
	return has;
}

/* The pod's name for CLAIM: the resourceClaims entry that names it
 * (resourceClaimName, a claim several pods may share), or the one the
 * claim controller made it for (status.resourceClaimStatuses); or NULL. */
static const char *pod_claim_name(const cJSON *pod, const char *claim)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, json_get(pod, "spec", "resourceClaims", NULL)) {
		const char *c = json_str(e, "resourceClaimName");
		if (c && strcmp(c, claim) == 0)
			return json_str(e, "name");
	}
	cJSON_ArrayForEach(e, json_get(pod, "status", "resourceClaimStatuses", NULL)) {
		const char *c = json_str(e, "resourceClaimName");
		if (c && strcmp(c, claim) == 0)
			return json_str(e, "name");
	}
	return NULL;
}

/* A container's claim entry that names the pod's claim POD_CLAIM, and,
 * when it names a request, REQUEST's (or a subrequest of it, "REQ/SUB"). */
static int entry_uses(const cJSON *use, const char *pod_claim, const char *request)
{
	const char *n = json_str(use, "name"), *r = json_str(use, "request");
	size_t len = r ? strlen(r) : 0;

	if (!pod_claim || !n || strcmp(n, pod_claim) != 0)
		return 0;
	return !r || (request && strncmp(request, r, len) == 0 && (request[len] == '\0' || request[len] == '/'));
}

/* Does container CTR use the claim's REQUEST (the result that names the
 * GPU): by the pod's name for the claim, or as the scheduler mapped the
 * extended resource's request to it? */
static int container_uses(const cJSON *pod, const cJSON *ctr, const char *claim, const char *pod_claim,
			  const char *request)
{
	const char *name = json_str(ctr, "name");
	const cJSON *ext = json_get(pod, "status", "extendedResourceClaimStatus", NULL), *c;
	const char *ext_claim = json_str(ext, "resourceClaimName");

	cJSON_ArrayForEach(c, json_get(ctr, "resources", "claims", NULL))
		if (entry_uses(c, pod_claim, request))
			return 1;
	if (!name || !request || !ext_claim || strcmp(ext_claim, claim) != 0)
		return 0;
	cJSON_ArrayForEach(c, json_get(ext, "requestMappings", NULL)) {
		const char *cn = json_str(c, "containerName"), *rn = json_str(c, "requestName");
		if (cn && rn && strcmp(cn, name) == 0 && strcmp(rn, request) == 0)
			return 1;
	}
	return 0;
}

/* Each container (init containers too: a sidecar holds its GPU as long as
 * the pod) of the live pods CLAIM is reserved for, by UID, that uses the
 * claim's REQUEST. */
static void claim_holders(const cJSON *list, const cJSON *claim, const char *request,
			  void (*hold)(void *, const char *, const char *, const char *), void *ctx)
{
	static const char *const kinds[] = { "initContainers", "containers" };
	const cJSON *md = json_get(claim, "metadata", NULL), *r, *ctr;
	const char *ns = json_str(md, "namespace"), *name = json_str(md, "name");

	cJSON_ArrayForEach(r, json_get(claim, "status", "reservedFor", NULL)) {
		const char *kind = json_str(r, "resource"), *uid = json_str(r, "uid");
		const cJSON *pod = kind && uid && name && strcmp(kind, "pods") == 0 ? kube_live_pod(list, uid) : NULL;
		const char *pns = json_str(json_get(pod, "metadata", NULL), "namespace");
		const char *pname = json_str(json_get(pod, "metadata", NULL), "name");
		const char *pod_claim = pod ? pod_claim_name(pod, name) : NULL;

		if (!pns || !pname || !ns || strcmp(pns, ns) != 0)
			continue;
		for (size_t k = 0; k < 2; k++)
			cJSON_ArrayForEach(ctr, json_get(pod, "spec", kinds[k], NULL))
				if (container_uses(pod, ctr, name, pod_claim, request))
					hold(ctx, pns, pname, json_str(ctr, "name"));
	}
}

/* Call EACH with the claim and request of each result of the driver's, in
 * a claim of LIST, on the GPU UUID, until it returns nonzero. */
typedef int result_fn(void *ctx, const cJSON *claim, const char *request);

static void results_on(const cJSON *list, const char *uuid, result_fn *each, void *ctx)
{
	const cJSON *claim, *res;

	cJSON_ArrayForEach(claim, json_get(list, "items", NULL)) {
		const char *kind = json_str(claim, "kind");

		if (!uuid || !kind || strcmp(kind, "ResourceClaim") != 0)
			continue;
		cJSON_ArrayForEach(res, json_get(claim, "status", "allocation", "devices", "results", NULL)) {
			const char *driver = json_str(res, "driver"), *pool = json_str(res, "pool");
			const char *device = json_str(res, "device"), *got;
			if (!driver || !pool || !device || strcmp(driver, DRA_DRIVER_NAME) != 0)
				continue;
			if ((got = dra_device_gpu(list, pool, device)) && strcmp(got, uuid) == 0 &&
			    each(ctx, claim, json_str(res, "request")))
				return;
		}
	}
}

struct holders {
	const cJSON *list;
	void (*hold)(void *ctx, const char *ns, const char *pod, const char *container);
	void *ctx;
};

static int result_holders(void *ctx, const cJSON *claim, const char *request)
{
	struct holders *h = ctx;

	claim_holders(h->list, claim, request, h->hold, h->ctx);
	return 0;
}

void gpu_claims_holders(const cJSON *list, const char *uuid,
			void (*hold)(void *ctx, const char *ns, const char *pod, const char *container), void *ctx)
{
	struct holders h = { .list = list, .hold = hold, .ctx = ctx };

	results_on(list, uuid, result_holders, &h);
}

/* Does a config's "requests" name REQUEST (none: every request)? */
static int config_names(const cJSON *requests, const char *request)
{
	const cJSON *r;

	if (cJSON_GetArraySize(requests) == 0)
		return 1;
	cJSON_ArrayForEach(r, requests)
		if (cJSON_IsString(r) && request && strcmp(r->valuestring, request) == 0)
			return 1;
	return 0;
}

/* The strategy of the GpuConfig of the driver's that CLAIM's allocation
 * applies to REQUEST's result, or NULL (device_state.go: the class's
 * configs, then the claim's; the last that names the request wins). */
static const char *result_sharing(const cJSON *claim, const char *request)
{
	static const char *const sources[] = { "FromClass", "FromClaim" };
	const char *strategy = NULL;
	const cJSON *c;

	for (size_t s = 0; s < 2; s++)
		cJSON_ArrayForEach(c, json_get(claim, "status", "allocation", "devices", "config", NULL)) {
			const cJSON *params = json_get(c, "opaque", "parameters", NULL);
			const char *src = json_str(c, "source"), *driver = json_str(json_get(c, "opaque", NULL), "driver");
			const char *kind = json_str(params, "kind");

			if (!src || strcmp(src, sources[s]) != 0 || !driver || strcmp(driver, DRA_DRIVER_NAME) != 0 ||
			    !kind || strcmp(kind, "GpuConfig") != 0 || !config_names(json_get(c, "requests", NULL), request))
				continue;
			strategy = json_str(json_get(params, "sharing", NULL), "strategy");
		}
	return strategy;
}

static int result_strategy(void *ctx, const cJSON *claim, const char *request)
{
	const char **strategy = ctx;

	return (*strategy = result_sharing(claim, request)) != NULL;
}

const char *gpu_claims_sharing(const cJSON *list, const char *uuid)
{
	const char *strategy = NULL;

	results_on(list, uuid, result_strategy, &strategy);
	return strategy;
}

/* A holder's pod, "NS/POD", once in the strv CTX. */
static void note_pod(void *ctx, const char *ns, const char *pod, const char *container)
{
	struct strv *pods = ctx;
	char *who = xasprintf("%s/%s", ns, pod);

	(void)container;
	if (!strv_has(pods, who))
		strv_push(pods, who);
	free(who);
}

void gpu_claims_use(const cJSON *list, const char *node, struct gpu_use *use)
{
	struct strv pub = { 0 }, sharing = { 0 };

	dra_published_uuids(list, node, &pub, NULL);
	*use = (struct gpu_use){ .devices = (int)pub.n };
	for (size_t i = 0; i < pub.n; i++) {
		struct strv pods = { 0 };

		gpu_claims_holders(list, pub.v[i], note_pod, &pods);
		use->in_use += pods.n == 1;
		use->shared += pods.n > 1;
		use->free += pods.n == 0;
		for (size_t k = 0; pods.n > 1 && k < pods.n; k++)
			if (!strv_has(&sharing, pods.v[k]))
				strv_push(&sharing, pods.v[k]);
		strv_free(&pods);
	}
	use->shared_by = (int)sharing.n;
	strv_free(&sharing);
	strv_free(&pub);
}
