/* gateway/verify/verify_request.c - verify's first check: the container's GPU request (see gateway/verify/verify_checks.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "gateway/verify/verify_checks.h"

static int has_cap(const char *caps, const char *cap)
{
	size_t n = strlen(cap);

	for (const char *p = caps; (p = strstr(p, cap)); p += n)
		if ((p == caps || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* A CDI request names devices of the NVIDIA spec, which brings every
 * driver file itself; Docker's nvidia driver must be asked for at least
 * one GPU with what the chain needs: utility (NVML, nvidia-smi) and
 * compute. */
void verify_device_request(const struct gateway *gw, struct check *c)
{
	const struct gw_container *k = &gw->c;
	cleanup_free char *missing = xstrdup("");

	if (k->gpu_cdi) {
		check_set(c, CHECK_PASS, xasprintf("CDI: %s", k->gpu_request_desc));
		return;
	}
	for (const char *const *cap = (const char *const[]){ "gpu", "utility", "compute", NULL }; *cap; cap++)
		if (!has_cap(k->gpu_caps, *cap)) {
			char *m = xasprintf("%s%s%s", missing, *missing ? "," : "", *cap);
			free(missing);
			missing = m;
		}
	if (*k->gpu_driver && strcmp(k->gpu_driver, "nvidia") != 0)
		check_set(c, CHECK_FAIL, xasprintf("%s: driver is not nvidia", k->gpu_request_desc));
	else if (k->gpu_count == 0 && !*k->gpu_devices)
		check_set(c, CHECK_FAIL, xasprintf("%s: the request names no GPU", k->gpu_request_desc));
	else if (*missing)
		check_set(c, CHECK_FAIL, xasprintf("%s: capabilities %s missing", k->gpu_request_desc, missing));
	else
		check_set(c, CHECK_PASS, xasprintf("legacy --gpus: %s", k->gpu_request_desc));
}

/* The container's --gpus, as the lookup read it (or why it does not
 * read, which the judge reports), and its text for messages. */
static void selection(const struct gateway *gw, struct gpu_looks *l)
{
	if (l->sel)
		return;
	l->want = gw->has_gpus ? &gw->gpus : NULL;
	l->sel = l->want ? gpus_string(l->want) : xstrdup("?");
}

/* The host's GPUs from the driver's list the look read, or else the
 * probe started. */
static int host_of_look(const struct gateway *gw, struct gpu_looks *l, os_error *err)
{
	selection(gw, l);
	if (l->want && gpus_host_of_driver(&l->mine, l->want, &l->host))
		return 0;
	return (l->host_call = host_gpus_probe_start(gw->ctr.on, gw->c.image, gw->c.gpu_cdi, 0, err)) ? 0 : -1;
}

int verify_gpus_seen(const struct gateway *gw, struct gpu_looks *l, const char *text, const char **rest,
		     struct strv *seen, int *devices, os_error *err)
{
	if (container_gpus_read(gw->container, text, &l->mine, rest, err) < 0 || host_of_look(gw, l, err) < 0 ||
	    verify_mig_start(gw, l, err) < 0)
		return -1;
	for (int i = 0; i < l->mine.n; i++)
		strv_push(seen, l->mine.v[i].uuid);
	*devices = gpus_plugin_devices(&l->mine, gw->mig);
	return 0;
}

/* What actually gave a legacy request its GPUs, when it was not the hook
 * asked for: Docker 29.2 and later send --gpus through CDI first
 * (moby's daemon/devices_nvidia_linux.go) wherever nvidia-cdi-hook is on
 * the daemon's PATH and the spec resolves the devices. */
static const char *injected_by(const struct gateway *gw, const struct host_gpus *mine)
{
	if (!gw->c.gpu_cdi && mine->injected == GPUS_INJECTED_CDI)
		return " (Docker gave them through CDI, as Docker 29.2 and later do for --gpus when the NVIDIA CDI spec has them)";
	return "";
}

/* The container must see exactly the GPUs its request means on the Docker
 * host, by UUID: its own nvidia-smi against the host's (the driver's list,
 * or the probe's). */
int verify_gpus_judge(const struct gateway *gw, struct gpu_looks *l, const struct strv *seen, struct check *c,
		      os_error *err)
{
	const struct host_gpus *host = &l->host;
	struct strv want = { 0 };
	os_error e = { 0 };
	cleanup_free char *has = NULL, *means = NULL;
	int rc = -1, exact, probed = l->host_call ? host_gpus_probe_finish(l->host_call, gw->ctr.on, gw->c.image, &l->host, &e) : 0;

	l->host_call = NULL;
	selection(gw, l);
	if (!l->want) {
		os_error_set(err, OS_EXIT_FAILURE, "%s", gw->gpus_error ? gw->gpus_error : "the container asks for no GPU");
		goto out;
	}
	if (probed == 0 && host->n == 0 && l->mine.n == 0) {
		check_set(c, CHECK_PASS, xasprintf("%s; the gateway sees no GPU, and the Docker host has none", c->evidence));
		rc = 0;
		goto out;
	}
	if (e.msg || gpus_resolve(l->want, host, &want, &e) < 0) {
		check_set(c, CHECK_FAIL, xasprintf("%s; %s", c->evidence, e.msg));
		rc = 0;
		goto out;
	}
	exact = seen->n == want.n;
	for (size_t i = 0; exact && i < want.n; i++)
		exact = strv_has(seen, want.v[i]);
	has = strv_join(seen, ", ");
	means = strv_join(&want, ", ");
	if (exact) {
		check_set(c, CHECK_PASS, xasprintf("%s%s; the gateway sees %s: exactly --gpus %s", c->evidence,
						   injected_by(gw, &l->mine), has, l->sel));
		verify_mig_judge(l, c);
	} else
		check_set(c, CHECK_FAIL, xasprintf("%s%s; the gateway sees %s, but --gpus %s is %s on the Docker host",
						   c->evidence, injected_by(gw, &l->mine), *has ? has : "no GPU", l->sel, means));
	rc = 0;
out:
	strv_free(&want);
	os_error_clear(&e);
	return rc;
}

void verify_gpus_free(struct gpu_looks *l)
{
	docker_drop(&l->host_call);
	docker_drop(&l->mig_call);
	host_gpus_free(&l->mine);
	host_gpus_free(&l->host);
	free(l->sel);
}

/* The smoke pod's GPU must be one the gateway was given. */
char *verify_evidence_uuid(const struct check *c)
{
	const char *u = c->evidence ? strstr(c->evidence, "(UUID: ") : NULL;

	return u ? xstrndup(u + 7, strcspn(u + 7, ")")) : NULL;
}

void verify_smoke_gpu(const struct strv *seen, struct check *c)
{
	cleanup_free char *uuid = verify_evidence_uuid(c);

	if (c->status == CHECK_PASS && uuid && seen->n && !strv_has(seen, uuid))
		check_set(c, CHECK_FAIL, xasprintf("%s, which is not one of the gateway's GPUs", c->evidence));
}

