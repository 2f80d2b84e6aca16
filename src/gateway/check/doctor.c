/* gateway/check/doctor.c - doctor's checks (see gateway/check/doctor.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/check/doctor.h"
#include "gateway/check/doctor_host.h"
#include "gateway/check/doctor_pitfalls.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"
#include "gateway/gpu/gpu_mode.h"

/* Docker 28.2+ lists the CDI devices it found: nvidia.com/gpu=... */
static int has_cdi_gpus(const cJSON *info)
{
	struct daemon_gpus d;
	int n;

	daemon_gpus_from_info(info, &d);
	n = (int)d.cdi.n;
	daemon_gpus_free(&d);
	return n > 0;
}

static void check_nvidia_runtime(struct doctor *d, const cJSON *info)
{
	const cJSON *runtimes = json_get(info, "Runtimes", NULL);
	const cJSON *rt;
	int has_nvidia = cJSON_GetObjectItemCaseSensitive(runtimes, "nvidia") != NULL;
	cleanup_free char *names = xstrdup("");

	cJSON_ArrayForEach(rt, runtimes) {
		char *n = xasprintf("%s%s%s", names, *names ? "," : "", rt->string);
		free(names);
		names = n;
	}
	if (has_nvidia)
		doctor_check(d, CHECK_PASS, "docker-runtimes", NULL, "docker runtimes: %s (nvidia registered)", names);
	else if (has_cdi_gpus(info))
		doctor_check(d, CHECK_PASS, "docker-runtimes", NULL, "docker runtimes: %s (no nvidia runtime; CDI names the GPUs)",
		             *names ? names : "none");
	else
		doctor_check(d, CHECK_WARN, "docker-runtimes",
		             "no nvidia runtime and no CDI GPUs; if 'docker run --gpus all' fails, run 'nvidia-ctk runtime configure --runtime=docker' and restart docker, or generate a CDI spec with 'nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml'",
		             "docker runtimes: %s", *names ? names : "none");
}

/* Docker's CDI view (Docker 28.2+): where it reads specs, and the devices
 * (e.g. nvidia.com/gpu=0) it found there. Absent on older daemons. */
static void check_cdi(struct doctor *d, const cJSON *info)
{
	cleanup_free char *dirs = json_join_strings(json_get(info, "CDISpecDirs", NULL), ", ");
	cleanup_free char *devices = NULL;
	const cJSON *dev;

	if (*dirs)
		doctor_check(d, CHECK_PASS, "cdi-spec-dirs", NULL, "CDI spec directories: %s", dirs);
	cJSON_ArrayForEach(dev, json_get(info, "DiscoveredDevices", NULL)) {
		const char *id = json_str(dev, "ID"), *source = json_str(dev, "Source");
		if (!id)
			continue;
		char *n = xasprintf("%s%s%s%s%s", devices ? devices : "", devices ? ", " : "", id,
				    source ? " from " : "", source ? source : "");
		free(devices);
		devices = n;
	}
	if (devices)
		doctor_check(d, CHECK_PASS, "discovered-devices", NULL, "devices Docker discovered: %s", devices);
}

/* The path `gateway start --gpu` takes on this daemon (--gpu-mode auto). */
static void check_gpu_mode(struct doctor *d, const cJSON *info)
{
	struct daemon_gpus g;

	daemon_gpus_from_info(info, &g);
	if (g.cdi.n && g.gpus_by_cdi)
		doctor_check(d, CHECK_PASS, "gpu-mode", NULL,
		             "gateway start --gpu gives GPUs as CDI devices (%s, ...); --gpu-mode legacy uses --gpus, which this Docker (29.2 or later) sends through CDI as well while the NVIDIA spec has the GPUs (nvidia-cdi-hook on its PATH), the toolkit's hook only otherwise",
		             g.cdi.v[0]);
	else if (g.cdi.n)
		doctor_check(d, CHECK_PASS, "gpu-mode", NULL, "gateway start --gpu gives GPUs as CDI devices (%s, ...); --gpu-mode legacy uses --gpus",
		             g.cdi.v[0]);
	else
		doctor_check(d, CHECK_PASS, "gpu-mode", NULL, "gateway start --gpu gives GPUs through Docker's --gpus (the daemon lists no NVIDIA CDI devices)");
	daemon_gpus_free(&g);
}

/* The daemon's checks from its `docker info` answer. */
static void check_docker_info(struct doctor *d, const cJSON *info)
{
	const char *cg = json_str(info, "CgroupVersion");
	const char *driver = json_str(info, "CgroupDriver");

	doctor_check(d, CHECK_PASS, "cgroups", NULL, "cgroups: v%s, driver %s", cg ? cg : "?", driver ? driver : "?");
	check_nvidia_runtime(d, info);
	check_cdi(d, info);
	check_gpu_mode(d, info);
}

/* The image a start would use: built yet? self-contained (a start needs no
 * network)? An absent default image is only a warning: start builds it.
 * 1 when Docker has it, else 0. */
static int check_cluster_image(struct doctor *d, const char *image)
{
	struct image_facts f;
	os_error err = { 0 };
	int rc = image_read(image, &f, &err);
	int present = f.img.exists;   /* also when its bundle could not be judged */

	if (rc < 0) {
		doctor_check(d, CHECK_FAIL, "cluster-image", NULL, "cluster image %s: %s", image, err.msg);
	} else if (!present) {
		doctor_check(d, CHECK_WARN, "cluster-image",
		             image_named(image) ? "it is pulled at the first start; pull it now with 'docker pull'"
				            : "the first 'gateway start' builds it; build it now with 'openshell image build'",
		             "cluster image %s: not here yet", image);
	} else if (f.self_contained) {
		doctor_check(d, CHECK_PASS, "cluster-image", NULL, "cluster image %s: self-contained (k3s %s, device plugin %s)",
		             image, f.k3s ? f.k3s : "?", f.chart ? f.chart : "?");
	} else {
		doctor_check(d, CHECK_WARN, "cluster-image", "rebuild it with 'openshell image build'",
		             "cluster image %s: not self-contained, a start may need network: %s", image, f.why);
	}
	image_facts_free(&f);
	os_error_clear(&err);
	return present;
}

/* Docker first; then the daemon's host, read in a container of the image
 * a start would use, for the driver, the toolkit and the pitfalls. */
void doctor_run(struct doctor *d)
{
	const char *image = gateway_default_image();
	struct host_facts facts;
	os_error err = { 0 };
	cJSON *info = NULL;
	int present = 0, have_facts;

	if (docker_init(&err) < 0) {
		doctor_check(d, CHECK_FAIL, "docker-client", NULL, "docker client: %s", err.msg);
	} else {
		doctor_check(d, CHECK_PASS, "docker-client", NULL, "docker client: %s", docker_path());
		/* One `docker info`: the daemon answers, and says what it has. */
		if (docker_info(NULL, &info, &err) < 0) {
			doctor_check(d, CHECK_FAIL, "docker-daemon", NULL, "docker daemon: %s", err.msg);
		} else {
			doctor_check(d, CHECK_PASS, "docker-daemon", NULL, "docker daemon: version %s",
			             json_str(info, "ServerVersion"));
			check_docker_info(d, info);
			present = check_cluster_image(d, image);
		}
	}
	have_facts = doctor_host_read(d, info, image, present, &facts) == 0;
	if (have_facts)
		doctor_host_checks(d, &facts);
	doctor_pitfalls(d, info, have_facts ? &facts : NULL);
	if (have_facts)
		host_facts_free(&facts);
	cJSON_Delete(info);
	os_error_clear(&err);
}
