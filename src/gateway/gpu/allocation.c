/* gateway/gpu/allocation.c - the GPU allocation mode (see gateway/gpu/allocation.h). */
#include "config.h"

#include "base/exitcode.h"
#include "base/parse.h"
#include "gateway/gpu/allocation.h"
#include "kube/objects.h"

static const char *const allocation_names[] = { [GPU_ALLOCATION_DEVICE_PLUGIN] = "device-plugin",
						[GPU_ALLOCATION_DRA] = "dra" };

#define N_ALLOCATIONS ((int)(sizeof(allocation_names) / sizeof(allocation_names[0])))

static const struct gpu_allocator allocators[] = {
	[GPU_ALLOCATION_DEVICE_PLUGIN] = {
		.mode = GPU_ALLOCATION_DEVICE_PLUGIN,
		.title = "the NVIDIA device plugin",
		.daemonset = DEVICE_PLUGIN_RELEASE,
		.ns = DEVICE_PLUGIN_NAMESPACE,
		.pod_label = DEVICE_PLUGIN_LABEL,
		.pod_value = DEVICE_PLUGIN_NAME,
		.container = DEVICE_PLUGIN_CONTAINER,
		.helmchart = DEVICE_PLUGIN_HELMCHART,
		.helm_job = DEVICE_PLUGIN_HELM_JOB,
	},
	/* The chart's kubelet plugin (templates/kubeletplugin.yaml): its pods'
	 * selector label, its "gpus" container running gpu-kubelet-plugin. */
	[GPU_ALLOCATION_DRA] = {
		.mode = GPU_ALLOCATION_DRA,
		.title = "NVIDIA's DRA driver",
		.daemonset = DRA_KUBELET_PLUGIN,
		.ns = DRA_DRIVER_NAMESPACE,
		.pod_label = DRA_DRIVER_RELEASE "-component",
		.pod_value = "kubelet-plugin",
		.container = "gpus",
		.helmchart = DRA_DRIVER_RELEASE,
		.helm_job = "helm-install-" DRA_DRIVER_RELEASE,
	},
};

const struct gpu_allocator *gpu_allocator(enum gpu_allocation a)
{
	return &allocators[a == GPU_ALLOCATION_DRA ? GPU_ALLOCATION_DRA : GPU_ALLOCATION_DEVICE_PLUGIN];
}

const cJSON *gpu_allocator_daemonset(const struct gpu_allocator *by, const cJSON *list)
{
	/* The device plugin's chart renders its MPS daemon with its labels:
	 * kube_find_device_plugin tells them apart. */
	return by->mode == GPU_ALLOCATION_DEVICE_PLUGIN ? kube_find_device_plugin(list)
							: kube_find(list, "DaemonSet", by->daemonset);
}

int gpu_allocation_parse(const char *text, enum gpu_allocation *a, os_error *err)
{
	int i;

	if (parse_option_word("--gpu-allocation", text, allocation_names, N_ALLOCATIONS, &i, err) < 0)
		return -1;
	*a = (enum gpu_allocation)i;
	return 0;
}

const char *gpu_allocation_name(enum gpu_allocation a)
{
	return a == GPU_ALLOCATION_UNSET ? "unset" : allocation_names[a];
}

int gpu_allocation_check(enum gpu_allocation a, const struct sharing *s, enum mig_strategy m, os_error *err)
{
	if (a != GPU_ALLOCATION_DRA)
		return 0;
	if (sharing_asked(s))
		return os_error_set(err, OS_EXIT_USAGE,
				    "--gpu-sharing configures NVIDIA's device plugin, and --gpu-allocation dra runs its DRA driver instead, where a pod's claim asks for sharing (which openshell does not set up yet): leave out --gpu-sharing, or use --gpu-allocation device-plugin");
	if (m != MIG_UNSET)
		return os_error_set(err, OS_EXIT_USAGE,
				    "--mig-strategy configures NVIDIA's device plugin, and --gpu-allocation dra runs its DRA driver instead, which publishes each GPU as it finds it: leave out --mig-strategy, or use --gpu-allocation device-plugin");
	return 0;
}

enum gpu_allocation gpu_allocation_of_env(const char *value)
{
	int i;

	if (value && parse_keyword(value, allocation_names, N_ALLOCATIONS, &i) == 0)
		return (enum gpu_allocation)i;
	return GPU_ALLOCATION_DEVICE_PLUGIN;
}
