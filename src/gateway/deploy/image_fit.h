/* gateway/deploy/image_fit.h - does a cluster image serve the GPU allocation asked for?
 *
 * NVIDIA's DRA driver needs Kubernetes 1.34 or later (resource.k8s.io/v1
 * went GA there, docs/dra-sources.md), and an image built offline must
 * bundle its chart and its image, or the gateway waits for a pull that
 * never comes. The image's labels say both (deploy/docker/Dockerfile: its
 * k3s version, the bundle's charts and images). An image without them is
 * not one of the recipe's, and is let be.
 */
#ifndef OPENSHELL_GATEWAY_IMAGE_FIT_H
#define OPENSHELL_GATEWAY_IMAGE_FIT_H

#include "base/error.h"
#include "docker/image.h"
#include "gateway/gpu/allocation.h"

/* The oldest Kubernetes minor (1.MINOR) that serves DRA as the driver needs. */
#define DRA_MIN_KUBE_MINOR 34

/* IMG (REF, inspected) under allocation A: 0, or -1 with a usage-free
 * refusal that names the fix. */
int image_fit_allocation(const char *ref, const struct docker_image *img, enum gpu_allocation a, os_error *err);

/* The same by REF's LABELS where the caller has them (a look that found the
 * image), else by an inspect of REF on ON (a docker call within TIMEOUT_MS); not
 * under dra, nothing is asked. */
struct docker_target;
int image_check_allocation(const struct docker_target *on, const char *ref, const cJSON *labels, enum gpu_allocation a,
			   int timeout_ms, os_error *err);

#endif
