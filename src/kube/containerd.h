/* kube/containerd.h - which runtimes k3s gave its containerd.
 *
 * A RuntimeClass proves nothing on k3s: it creates `nvidia` (and the wasm
 * ones) at every start from its packaged runtimes.yaml, whatever is
 * installed. Whether containerd can run a pod under the nvidia handler is
 * written in the agent's config, /var/lib/rancher/k3s/agent/etc/containerd/
 * config.toml, which k3s regenerates at every start with a handler for each
 * runtime binary it found (nvidia-container-runtime on PATH or in
 * /usr/local/nvidia/toolkit). Without it, a pod with runtimeClassName nvidia
 * never gets a sandbox: `no runtime for "nvidia" is configured`.
 */
#ifndef OPENSHELL_KUBE_CONTAINERD_H
#define OPENSHELL_KUBE_CONTAINERD_H

#include <stddef.h>

#include "base/error.h"
#include "docker/target.h"

#define K3S_CONTAINERD_CONFIG "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"

struct runtime_fact {
	int config_read;     /* k3s has written its containerd config */
	int nvidia;          /* it has a runtime named nvidia */
	char *binary;        /* that runtime's BinaryName, or NULL */
};

/* Read it from the container: 0 (with config_read 0 while k3s has not
 * written the file yet, or it is empty), -1 when docker failed. */
int containerd_nvidia_runtime(const struct docker_ctr *ctr, int timeout_ms, struct runtime_fact *f, os_error *err);
/* The same beside other calls: started, then awaited and read. */
struct run_child *containerd_nvidia_runtime_start(const struct docker_ctr *ctr, int timeout_ms, os_error *err);
int containerd_nvidia_runtime_finish(struct run_child *c, struct runtime_fact *f, os_error *err);

/* The same from the file's text (for tests). */
void containerd_parse_nvidia(const char *toml, struct runtime_fact *f);
void runtime_fact_free(struct runtime_fact *f);

#endif
