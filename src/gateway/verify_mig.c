/* gateway/verify_mig.c - verify's look at the gateway's MIG capabilities (see gateway/verify_checks.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu_mode.h"
#include "gateway/verify_checks.h"

#define CAP_NODE "nvidia-cap"

static int names_mig(const struct gpus *g)
{
	for (size_t i = 0; g->kind == GPUS_DEVICES && i < g->ids.n; i++)
		if (strncmp(g->ids.v[i], "MIG-", 4) == 0)
			return 1;
	return 0;
}

/* The oracle is the NVIDIA runtime's own choice: a container given the
 * gateway's selection, the same way (Docker's nvidia driver or CDI),
 * unprivileged, gets the capability nodes of exactly its MIG devices
 * (libnvidia-container's nvc_mig_device_access_caps_mount; the CDI
 * spec's deviceNodes of each MIG device). */
int verify_mig_start(const struct gateway *gw, struct gpu_looks *l, os_error *err)
{
	struct strv args = { 0 };
	struct run_spec spec = { 0 };

	if (!l->want || !names_mig(l->want))
		return 0;
	strv_pushv(&args, (const char *const[]){ "run", "--rm", "--network=none", "--entrypoint=sh",
						 "--label=org.openshell.managed-by=openshell-gpu-probe", NULL });
	if (gw->c.gpu_cdi) {
		struct strv devices = { 0 };

		gpu_mode_cdi_devices(l->want, &devices);
		for (size_t i = 0; i < devices.n; i++)
			strv_pushf(&args, "--device=%s", devices.v[i]);
		strv_free(&devices);
	} else {
		cleanup_free char *request = gpus_docker_request(l->want);
		strv_pushf(&args, "--gpus=%s", request);
	}
	strv_pushv(&args, (const char *const[]){ gw->c.image, "-c", "ls /dev/nvidia-caps 2>/dev/null; true", NULL });
	l->mig_call = docker_start(strv_argv(&args), &spec, err);
	strv_free(&args);
	return l->mig_call ? 0 : -1;
}

static int held_by_gateway(const struct gpu_driver *d, int minor)
{
	for (size_t i = 0; i < d->n_caps; i++)
		if (d->caps[i].minor == minor)
			return d->caps[i].held;
	return 0;
}

/* The probe's nodes ("nvidia-cap12" lines) that are MIG capabilities of
 * the driver's list, into GIVEN as "nvidia-capN". */
static void probe_caps(const struct gpu_driver *d, const char *out, struct strv *given)
{
	for (size_t i = 0; i < d->n_caps; i++) {
		cleanup_free char *name = xasprintf(CAP_NODE "%d", d->caps[i].minor);
		const char *at = out;
		size_t n = strlen(name);

		while ((at = strstr(at, name)) && ((at != out && at[-1] != '\n') || (at[n] != '\n' && at[n] != '\0')))
			at += n;
		if (at)
			strv_push(given, name);
	}
}

/* Held capabilities of GPUs the gateway does not have, then (with a
 * probe) held ones the probe lacks and the probe's the gateway lacks. */
static void judge_caps(const struct gpu_driver *d, const struct strv *given, int probed, struct strv *foreign,
		       struct strv *extra, struct strv *missing)
{
	for (size_t i = 0; i < d->n_caps; i++) {
		const struct gpu_cap *cap = &d->caps[i];
		cleanup_free char *gpu = xasprintf("%d", cap->gpu);
		cleanup_free char *name = xasprintf(CAP_NODE "%d", cap->minor);

		if (cap->held && !strv_has(&d->gpu_nodes, gpu))
			strv_pushf(foreign, "/dev/nvidia-caps/%s (of /dev/nvidia%d)", name, cap->gpu);
		else if (probed && cap->held && !strv_has(given, name))
			strv_pushf(extra, "/dev/nvidia-caps/%s", name);
	}
	for (size_t i = 0; probed && i < given->n; i++)
		if (!held_by_gateway(d, atoi(given->v[i] + strlen(CAP_NODE))))
			strv_pushf(missing, "/dev/nvidia-caps/%s", given->v[i]);
}

/* The probe's answer into GIVEN: 1, or 0 without a probe, or -1 with
 * *WHY when it failed. */
static int probe_finish(struct gpu_looks *l, const struct gpu_driver *d, struct strv *given, char **why)
{
	struct run_result res = { 0 };
	os_error e = { 0 };
	int rc = 1;

	if (!l->mig_call)
		return 0;
	if (docker_await(l->mig_call, &res, &e) < 0 || res.status != 0) {
		*why = xasprintf("cannot tell which MIG capabilities a container given --gpus %s gets: %s", l->sel,
				 e.msg ? e.msg : res.err);
		rc = -1;
	} else {
		probe_caps(d, res.out, given);
	}
	l->mig_call = NULL;
	run_result_free(&res);
	os_error_clear(&e);
	return rc;
}

static void add(struct check *c, enum check_status status, char *what)
{
	check_set(c, status, xasprintf("%s; %s", c->evidence, what));
	free(what);
}

void verify_mig_judge(const struct gateway *gw, struct gpu_looks *l, struct check *c)
{
	const struct gpu_driver *d = &l->mine.driver;
	struct strv given = { 0 }, foreign = { 0 }, extra = { 0 }, missing = { 0 };
	char *why = NULL;
	int probed = probe_finish(l, d, &given, &why);
	cleanup_free char *has = NULL, *gets = strv_join(&given, ", ");

	if (c->status != CHECK_PASS || d->n_caps == 0) {
		free(why);
		goto out;
	}
	judge_caps(d, &given, probed > 0, &foreign, &extra, &missing);
	if (probed < 0) {
		add(c, CHECK_FAIL, why);
	} else if (foreign.n) {
		has = strv_join(&foreign, ", ");
		add(c, CHECK_FAIL, xasprintf("it can open MIG capabilities of GPUs it was not given: %s", has));
	} else if (extra.n) {
		has = strv_join(&extra, ", ");
		add(c, CHECK_FAIL, xasprintf("it can open %s, of MIG instances it was not given (a container given --gpus %s gets %s)%s",
					     has, l->sel, *gets ? gets : "none",
					     gw->c.gpu_cdi ? "; with CDI the gateway keeps every MIG instance of its GPUs: "
							     "recreate it with --gpu-mode legacy to keep only those given" : ""));
	} else if (missing.n) {
		has = strv_join(&missing, ", ");
		add(c, CHECK_FAIL, xasprintf("it lacks %s, which a container given --gpus %s gets: its MIG devices cannot be opened",
					     has, l->sel));
	} else if (probed) {
		add(c, CHECK_PASS, xasprintf("MIG capabilities %s: exactly a container's given --gpus %s", gets, l->sel));
	} else {
		add(c, CHECK_PASS, xstrdup("no MIG capability of another GPU"));
	}
out:
	strv_free(&given);
	strv_free(&foreign);
	strv_free(&extra);
	strv_free(&missing);
}
