/* gateway/verify/verify_allocatable.c - verify's allocatable check under the device plugin (see gateway/verify/verify_checks.h). */
#include "config.h"

#include <string.h>

#include "base/strv.h"
#include "base/xalloc.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"
#include "gateway/verify/verify_checks.h"
#include "kube/objects.h"

/* With --mig-strategy mixed the smoke pod asks for a MIG device: the
 * first profile the node has (owned, in *resource). */
static void mig_choice(const struct gateway *gw, const struct strv *mig, char **resource)
{
	if (gw->mig == MIG_MIXED && mig->n)
		*resource = xstrndup(mig->v[0], strcspn(mig->v[0], "="));
}

/* What the plugin's GPUS devices are: under the single strategy MIG
 * devices, if any; on WSL2 its one device, every GPU (PER_DEVICE > 1). */
static char *device_unit(const struct gateway *gw, int gpus, int per_device)
{
	if (per_device > 1)
		return xasprintf("device (WSL2's all, %d GPUs)", per_device);
	if (gw->mig == MIG_SINGLE)
		return xstrdup(gpus == 1 ? "device" : "devices");
	return xstrdup(gpus == 1 ? "GPU" : "GPUs");
}

/* With time-slicing the node advertises each of the container's GPUS
 * devices replicas times: exactly that, or the arithmetic is off. MIG
 * devices of the mixed strategy count as resources of their own. */
void verify_allocatable(const struct gateway *gw, int gpus, int per_device, const cJSON *list, struct check *c,
			char **resource, int *schedulable)
{
	struct sharing sh;
	struct strv mig = { 0 };
	cleanup_free char *migs = NULL, *sick = NULL, *unit = device_unit(gw, gpus, per_device);
	long long n, cap, nmig;

	sharing_from_list(list, DEVICE_PLUGIN_RELEASE, &sh);
	n = kube_nodes_allocatable_gpus(list);
	cap = kube_nodes_capacity_gpus(list);
	sick = kube_gpus_unhealthy(n, cap);
	nmig = mig_resources(list, &mig);
	*schedulable = n > 0 || nmig > 0;
	migs = strv_join(&mig, ", ");
	mig_choice(gw, &mig, resource);
	if (n < 0 && nmig > 0)
		check_set(c, CHECK_PASS, xasprintf("node allocatable %s (MIG, --mig-strategy %s); no whole GPU", migs,
						   mig_strategy_name(gw->mig)));
	else if (n < 0)
		check_set(c, CHECK_FAIL, xstrdup("node allocatable has no nvidia.com/gpu: the device plugin registered no GPU (it logs \"No devices found. Waiting indefinitely.\" when it sees none)"));
	else if (sick)
		check_set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld: %s", n, sick));
	else if (sh.replicas > 1 && !gpus)
		check_set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld with %s:%d, but the gateway's own GPUs are unknown (see device-request), so the replicas cannot be checked",
						   n, sharing_mode_name(&sh), sh.replicas));
	else if (sh.replicas > 1 && n != (long long)gpus * sh.replicas)
		check_set(c, CHECK_FAIL, xasprintf("node allocatable nvidia.com/gpu = %lld, not %d %s x %d (%s:%d)", n, gpus, unit,
						   sh.replicas, sharing_mode_name(&sh), sh.replicas));
	else if (sh.replicas > 1)
		check_set(c, CHECK_PASS, xasprintf("node allocatable nvidia.com/gpu = %lld: %d %s x %d, %s (%s)",
						   n, gpus, unit, sh.replicas, sharing_mode_name(&sh),
						   sh.mps ? "pods share a GPU at once, each with its share of it" : "pods share a GPU in turns"));
	else
		check_set(c, n > 0 || nmig > 0 ? CHECK_PASS : CHECK_FAIL,
			  xasprintf("node allocatable nvidia.com/gpu = %lld%s%s%s%s", n,
				    n || nmig ? "" : ": ", n || nmig ? "" : kube_gpus_zero_why(cap),
				    nmig ? ", " : "", nmig ? migs : ""));
	strv_free(&mig);
}
