/* gateway/deploy/image_fit.c - a cluster image against the GPU allocation (see gateway/deploy/image_fit.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "gateway/deploy/image_fit.h"

/* The minor of "v1.37.1+k3s1", or -1 when it does not read so. */
static int kube_minor(const char *k3s)
{
	char *end;
	long minor;

	if (!k3s || strncmp(k3s, "v1.", 3) != 0)
		return -1;
	minor = strtol(k3s + 3, &end, 10);
	return end == k3s + 3 || *end != '.' ? -1 : (int)minor;
}

/* The next word of a space-separated label at *AT: *W, *N long. */
static int next_word(const char **at, const char **w, size_t *n)
{
	*at += strspn(*at, " ");
	if (!**at)
		return 0;
	*w = *at;
	*n = strcspn(*at, " ");
	*at += *n;
	return 1;
}

/* The charts label names the driver's chart: "dra-driver-nvidia-gpu-0.4.1.tgz". */
static int bundles_driver_chart(const char *charts)
{
	static const char pre[] = DRA_DRIVER_RELEASE "-", suf[] = ".tgz";
	const char *at = charts, *w;
	size_t n;

	while (next_word(&at, &w, &n))
		if (n > strlen(pre) + strlen(suf) && strncmp(w, pre, strlen(pre)) == 0 &&
		    strncmp(w + n - strlen(suf), suf, strlen(suf)) == 0)
			return 1;
	return 0;
}

/* The images label names the driver's image, whose repository's last
 * part is the chart's name: "registry.k8s.io/…/dra-driver-nvidia-gpu:v0.4.1@sha256:…". */
static int bundles_driver_image(const char *images)
{
	const char *at = images, *w;
	size_t n;

	while (next_word(&at, &w, &n)) {
		size_t repo = strcspn(w, "@ "), name = repo;
		while (name > 0 && w[name - 1] != '/')
			name--;
		size_t len = strcspn(w + name, ":@ ");
		if (len == strlen(DRA_DRIVER_RELEASE) && strncmp(w + name, DRA_DRIVER_RELEASE, len) == 0)
			return 1;
	}
	return 0;
}

int image_fit_allocation(const char *ref, const struct docker_image *img, enum gpu_allocation a, os_error *err)
{
	const char *k3s = image_label(img, "org.openshell.k3s-version");
	const char *charts = image_label(img, "org.openshell.bundle.charts");
	const char *images = image_label(img, "org.openshell.bundle.images");
	int minor = kube_minor(k3s);

	if (a != GPU_ALLOCATION_DRA || !img->exists)
		return 0;
	if (minor >= 0 && minor < DRA_MIN_KUBE_MINOR)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "--gpu-allocation dra needs Kubernetes 1.%d or later (DRA's resource.k8s.io/v1), and image %s runs k3s %s: use an image of a newer k3s ('openshell image build' makes one), or --gpu-allocation device-plugin",
				    DRA_MIN_KUBE_MINOR, ref, k3s);
	if (charts && !bundles_driver_chart(charts))
		return os_error_set(err, OS_EXIT_FAILURE,
				    "image %s bundles no chart of NVIDIA's DRA driver (an older openshell built it; its charts: %s): rebuild it with 'openshell image build', or use --gpu-allocation device-plugin",
				    ref, charts);
	if (images && !bundles_driver_image(images))
		return os_error_set(err, OS_EXIT_FAILURE,
				    "image %s bundles no image of NVIDIA's DRA driver (its images: %s), which an offline gateway could not pull: rebuild it with 'openshell image build', or use --gpu-allocation device-plugin",
				    ref, images);
	return 0;
}

int image_check_allocation(const struct docker_target *on, const char *ref, const cJSON *labels, enum gpu_allocation a,
			   int timeout_ms, os_error *err)
{
	struct docker_image img;
	int rc;

	if (a != GPU_ALLOCATION_DRA)
		return 0;
	if (labels)
		return image_fit_allocation(ref, &(struct docker_image){ .exists = 1, .labels = (cJSON *)labels }, a, err);
	if (image_inspect(on, ref, timeout_ms, &img, err) < 0)
		return os_error_wrap(err, "cannot look at image %s", ref);
	rc = image_fit_allocation(ref, &img, a, err);
	docker_image_free(&img);
	return rc;
}
