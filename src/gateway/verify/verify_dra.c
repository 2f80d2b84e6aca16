/* gateway/verify/verify_dra.c - verify's checks of a gateway whose GPUs go by DRA (see gateway/verify/verify_checks.h).
 *
 * Under --gpu-allocation dra the node publishes its GPUs as devices of
 * ResourceSlices, and a pod gets one through a ResourceClaim, which the
 * scheduler allocates and reserves for it (resource.k8s.io/v1). The smoke
 * and privileged pods ask through a ResourceClaimTemplate of verify's own,
 * so that each gets a claim of its own, as a user's pod would; a pod's
 * claim is deleted once the pod is done, so what it was allocated is read
 * from each state the claims' watch says, not after. That watch starts
 * from the resourceVersion of the run's first object made, its template:
 * the API replays each claim's states from there, also those of a claim
 * whose pod ran and was done before the watch began (a listing would
 * show none of them).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/signals.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/verify/verify_checks.h"
#include "kube/objects.h"
#include "kube/watch.h"

int verify_dra_claim_read(const cJSON *claim, const char *pod, struct verify_claim *got)
{
	const cJSON *r, *res;
	const char *name = json_str(json_get(claim, "metadata", NULL), "name");
	int reserved = 0;

	cJSON_ArrayForEach(r, json_get(claim, "status", "reservedFor", NULL)) {
		const char *kind = json_str(r, "resource"), *who = json_str(r, "name");
		reserved |= kind && who && strcmp(kind, "pods") == 0 && strcmp(who, pod) == 0;
	}
	if (!reserved || !name)
		return 0;
	cJSON_ArrayForEach(res, json_get(claim, "status", "allocation", "devices", "results", NULL)) {
		const char *driver = json_str(res, "driver"), *pool = json_str(res, "pool");
		const char *device = json_str(res, "device");
		if (!driver || !pool || !device || strcmp(driver, DRA_DRIVER_NAME) != 0)
			continue;
		verify_claim_free(got);
		*got = (struct verify_claim){ .claim = xstrdup(name), .pool = xstrdup(pool), .device = xstrdup(device) };
		return 1;
	}
	return 0;
}

void verify_claim_free(struct verify_claim *got)
{
	free(got->claim);
	free(got->pool);
	free(got->device);
	*got = (struct verify_claim){ 0 };
}

/* Each state of a claim of the run's, as its watch says it. */
static void claim_seen(void *ctx, const cJSON *claim)
{
	struct verify_claims *vc = ctx;

	for (size_t i = 0; i < vc->n; i++)
		if (!vc->got[i].device)
			verify_dra_claim_read(claim, vc->pod[i], &vc->got[i]);
}

void verify_claims_init(struct verify_claims *vc, const struct docker_ctr *ctr, const char *selector,
			const struct deadline *by)
{
	*vc = (struct verify_claims){ .ctr = ctr, .by = by };
	vc->watch = (struct kube_watch){ .resource = "resourceclaims.resource.k8s.io", .ns = SMOKE_NAMESPACE,
					 .selector = selector, .api = DRA_API_PATH, .seen = claim_seen, .ctx = vc };
}

void verify_claims_add(struct verify_claims *vc, const char *pod)
{
	if (vc->n < VERIFY_PODS)
		vc->pod[vc->n++] = pod;
}

/* The claims' states come by their own watch, a moment behind the pods'
 * end at most: the watch runs this much past the --timeout, and a pod
 * that passed waits this much more for its claim's, at most. */
#define CLAIMS_GRACE_MS 5000
/* A watch that ended is started again no sooner than this after its last
 * start: an API that ends each at once is not asked in a loop. */
#define CLAIMS_AGAIN_MS 1000

static long long claims_until(const struct verify_claims *vc)
{
	return vc->by->at_ms + CLAIMS_GRACE_MS;
}

static int claims_start(struct verify_claims *vc, os_error *err)
{
	long long left = claims_until(vc) - clock_ms();

	vc->started_ms = clock_ms();
	/* Through the --timeout and its grace, not a watch's usual 30 s: a
	 * claim deleted while no watch ran (its pod done) is not listed
	 * again, nor is its device. kubectl ends it, inside the container
	 * too, KUBE_WATCH_GRACE_MS before docker's limit. */
	return kube_watch_start(&vc->watch, vc->ctr, (int)(left > 0 ? left : 1) + KUBE_WATCH_GRACE_MS, err);
}

static void keep_error(struct verify_claims *vc, os_error *err)
{
	free(vc->error);
	vc->error = xstrdup(err->msg ? err->msg : "?");
	os_error_clear(err);
}

void verify_claims_from(struct verify_claims *vc, const char *rv)
{
	if (vc->armed)
		return;
	vc->armed = 1;
	if (rv)
		kube_watch_since(&vc->watch, rv);
}

long long verify_claims_due(const struct verify_claims *vc)
{
	if (!vc->n || !vc->armed || vc->watch.c || signals_pending() || clock_ms() >= claims_until(vc))
		return 0;
	return vc->started_ms + CLAIMS_AGAIN_MS;
}

/* Its failures cost only the claims' evidence: kept, for the verdicts
 * that miss it, not an error of verify's. */
void verify_claims_again(struct verify_claims *vc)
{
	os_error err = { 0 };
	long long due;

	if (vc->watch.c && run_ended(vc->watch.c) && kube_watch_end(&vc->watch, &err) < 0)
		keep_error(vc, &err);
	if ((due = verify_claims_due(vc)) && clock_ms() >= due && claims_start(vc, &err) < 0)
		keep_error(vc, &err);
}

const struct verify_claim *verify_claims_of(const struct verify_claims *vc, const char *pod)
{
	static const struct verify_claim none;

	for (size_t i = 0; i < vc->n; i++)
		if (strcmp(vc->pod[i], pod) == 0)
			return &vc->got[i];
	return &none;
}

void verify_claims_await(struct verify_claims *vc, const char *const *pods, size_t n)
{
	long long due = clock_ms() + CLAIMS_GRACE_MS;
	size_t i;

	if (!n || !vc->by)
		return;
	/* Past the --timeout too (a pod found done at it): the watch outlives
	 * it by the grace. */
	for (;;) {
		struct backoff b = { 0 };
		long long again = 0;

		for (i = 0; i < n && verify_claims_of(vc, pods[i])->device; i++)
			;
		if (i == n || clock_ms() >= due)
			return;
		verify_claims_again(vc);
		if (vc->watch.c && run_wait_until(&vc->watch.c, 1, due) == RUN_WAIT_DUE)
			return;
		/* Down, and to start again a moment from now. */
		if (!vc->watch.c && (!(again = verify_claims_due(vc)) || again >= due))
			return;
		while (!vc->watch.c && backoff_wait(&b, again))
			;
	}
}

void verify_claims_free(struct verify_claims *vc)
{
	kube_watch_free(&vc->watch);
	free(vc->error);
	vc->error = NULL;
	for (size_t i = 0; i < vc->n; i++)
		verify_claim_free(&vc->got[i]);
	vc->n = 0;
}

/* What C's pod named for a device of UUID: its MIG device's UUID for a
 * MIG device (verify_judge_smoke() keeps the one MIG line), else its GPU's. */
static char *seen_uuid(const struct check *c, const char *uuid)
{
	const char *at;

	if (strncmp(uuid, "MIG-", 4) != 0)
		return verify_evidence_uuid(c);
	at = c->evidence ? strstr(c->evidence, "(UUID: MIG-") : NULL;
	return at ? xstrndup(at + 7, strcspn(at + 7, ")")) : NULL;
}

void verify_dra_judge_claim(const char *pod, const struct verify_claim *got, const char *watch_error,
			    const cJSON *slices, struct check *c)
{
	cleanup_free char *sees = NULL;
	const char *uuid;

	if (c->status != CHECK_PASS)
		return;
	if (!got->device) {
		cleanup_free char *why = watch_error ? xasprintf(" (the watch of the claims: %s)", watch_error) : NULL;
		check_set(c, CHECK_FAIL, xasprintf("%s, but no claim of its was seen allocated and reserved for it%s",
						   c->evidence, why ? why : ""));
		return;
	}
	uuid = dra_device_uuid(slices, got->pool, got->device);
	sees = uuid ? seen_uuid(c, uuid) : NULL;
	if (!uuid)
		check_set(c, CHECK_FAIL, xasprintf("%s; its claim %s was allocated device %s of pool %s, which no ResourceSlice of %s publishes",
						   c->evidence, got->claim, got->device, got->pool, DRA_DRIVER_NAME));
	else if (!sees || strcmp(uuid, sees) != 0)
		check_set(c, CHECK_FAIL, xasprintf("%s; but its claim %s was allocated %s (%s), not the device pod %s sees",
						   c->evidence, got->claim, got->device, uuid, pod));
	else
		check_set(c, CHECK_PASS, xasprintf("%s, the device %s its claim %s was allocated and reserved for it",
						   c->evidence, got->device, got->claim));
}

void verify_dra_judge_extended(const cJSON *pod, struct check *c)
{
	const char *claim = json_str(json_get(pod, "status", "extendedResourceClaimStatus", NULL), "resourceClaimName");

	if (c->status != CHECK_PASS)
		return;
	if (!claim)
		check_set(c, CHECK_FAIL, xasprintf("%s, but not through DRA: the pod has no status.extendedResourceClaimStatus, so something else serves " GPU_RESOURCE " (a device plugin?)",
						   c->evidence));
	else
		check_set(c, CHECK_PASS, xasprintf("%s; " GPU_RESOURCE ": 1 served through DeviceClass %s, by claim %s",
						   c->evidence, DRA_DEVICE_CLASS, claim));
}

/* Two sets of UUIDs, alike? */
static int same_uuids(const struct strv *a, const struct strv *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!strv_has(b, a->v[i]))
			return 0;
	return 1;
}

void verify_dra_slices(const cJSON *list, const char *node, const struct strv *seen, struct check *c,
		       int *schedulable)
{
	struct strv pub = { 0 };
	cleanup_free char *pubs = NULL, *mine = NULL;

	dra_published_uuids(list, node, &pub, NULL);
	pubs = strv_join(&pub, ", ");
	mine = strv_join(seen, ", ");
	*schedulable = pub.n > 0;
	if (!pub.n)
		check_set(c, CHECK_FAIL, xasprintf("no ResourceSlice of driver %s publishes a GPU of node %s (kubectl get resourceslices)",
						   DRA_DRIVER_NAME, node ? node : "?"));
	else if (seen->n && !same_uuids(&pub, seen))
		check_set(c, CHECK_FAIL, xasprintf("node %s's ResourceSlices publish %zu GPU%s (%s), not the %zu the gateway sees (%s)",
						   node ? node : "?", pub.n, pub.n == 1 ? "" : "s", pubs, seen->n, mine));
	else
		check_set(c, CHECK_PASS, xasprintf("node %s's ResourceSlices (driver %s) publish %zu GPU%s%s: %s",
						   node ? node : "?", DRA_DRIVER_NAME, pub.n, pub.n == 1 ? "" : "s",
						   seen->n ? ", the gateway's own by UUID" : "", pubs));
	strv_free(&pub);
}
