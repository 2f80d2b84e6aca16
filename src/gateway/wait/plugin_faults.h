/* gateway/wait/plugin_faults.h - faults that keep the device plugin from ever
 * running, told while the GPU wait goes on.
 *
 * A wait for the device plugin's pods would otherwise last to its
 * deadline for faults that never mend by themselves: an nvidia runtime
 * that cannot make the pods' sandboxes (the kubelet's Warning event names
 * it), and a plugin that exits with its own fatal error at every start
 * (main.go's "error starting plugins: ..."). Each is a verdict here, with
 * the fix it needs.
 */
#ifndef OPENSHELL_GATEWAY_PLUGIN_FAULTS_H
#define OPENSHELL_GATEWAY_PLUGIN_FAULTS_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "gateway/gpu/allocation.h"
#include "gateway/wait/wait.h"

/* PODS: the PodList of BY's namespace. -1 with *err set when one of
 * those faults holds; 0 when none does (yet). The plugin's own fatal
 * error is read of the device plugin only. */
int plugin_faults_judge(const struct wait_ctx *w, const struct gpu_allocator *by, const cJSON *pods, os_error *err);

/* The nvidia runtime's failure alone, from PODS, the PodList of NS: the
 * pods that run on it before the plugin's exist (under DRA, where k3s runs
 * every pod on it, the chart's Helm job). -1 with *err set, or 0. */
int plugin_runtime_judge(const struct wait_ctx *w, const char *ns, const cJSON *pods, os_error *err);

/* The kubelet's last Warning for a pod of PODS, "pod NS/NAME: REASON:
 * MESSAGE" (an events read of BY's namespace within T ms), or NULL (owned). */
char *plugin_pod_warning(const struct wait_ctx *w, const struct gpu_allocator *by, const cJSON *pods, int t);

#endif
