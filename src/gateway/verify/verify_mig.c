/* gateway/verify/verify_mig.c - verify's look at the gateway's MIG capabilities (see gateway/verify/verify_checks.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/strv.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/mig_caps.h"
#include "gateway/verify/verify_checks.h"

int verify_mig_start(const struct gateway *gw, struct gpu_looks *l, os_error *err)
{
	if (!l->want || !mig_caps_named(l->want))
		return 0;
	l->mig_call = mig_caps_probe_start(gw->ctr.on, gw->c.image, gw->c.gpu_cdi, l->want, 0, err);
	return l->mig_call ? 0 : -1;
}

static const struct gpu_cap *cap_of(const struct gpu_driver *d, int minor)
{
	for (size_t i = 0; i < d->n_caps; i++)
		if (d->caps[i].minor == minor)
			return &d->caps[i];
	return NULL;
}

/* The probe's answer: the minors that are MIG capabilities of the
 * driver's list, into GIVEN as "nvidia-capN"; 1, or 0 without a probe,
 * or -1 with *WHY when it failed. */
static int probe_finish(struct gpu_looks *l, const struct gpu_driver *d, struct strv *given, char **why)
{
	struct strv minors = { 0 };
	os_error e = { 0 };
	int rc = 1;

	if (!l->mig_call)
		return 0;
	if (mig_caps_probe_finish(l->mig_call, l->want, &minors, &e) < 0) {
		*why = xstrdup(e.msg);
		rc = -1;
	}
	for (size_t i = 0; i < minors.n; i++)
		if (cap_of(d, atoi(minors.v[i])))
			strv_pushf(given, MIG_CAP_NODE "%s", minors.v[i]);
	l->mig_call = NULL;
	strv_free(&minors);
	os_error_clear(&e);
	return rc;
}

/* Held capabilities of GPUs the gateway does not have, then (with a
 * probe) held ones the probe lacks and the probe's the gateway lacks. */
static void judge_caps(const struct gpu_driver *d, const struct strv *given, int probed, struct strv *foreign,
		       struct strv *extra, struct strv *missing)
{
	for (size_t i = 0; i < d->n_caps; i++) {
		const struct gpu_cap *cap = &d->caps[i];
		cleanup_free char *gpu = xasprintf("%d", cap->gpu);
		cleanup_free char *name = xasprintf(MIG_CAP_NODE "%d", cap->minor);

		if (cap->held && !strv_has(&d->gpu_nodes, gpu))
			strv_pushf(foreign, "/dev/nvidia-caps/%s (of /dev/nvidia%d)", name, cap->gpu);
		else if (probed && cap->held && !strv_has(given, name))
			strv_pushf(extra, "/dev/nvidia-caps/%s", name);
	}
	for (size_t i = 0; probed && i < given->n; i++) {
		const struct gpu_cap *cap = cap_of(d, atoi(given->v[i] + strlen(MIG_CAP_NODE)));
		if (cap && !cap->held)
			strv_pushf(missing, "/dev/nvidia-caps/%s", given->v[i]);
	}
}

static void add(struct check *c, enum check_status status, char *what)
{
	check_set(c, status, xasprintf("%s; %s", c->evidence, what));
	free(what);
}

void verify_mig_judge(struct gpu_looks *l, struct check *c)
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
		add(c, CHECK_FAIL, xasprintf("it can open %s, of MIG instances it was not given (a container given --gpus %s gets %s)",
					     has, l->sel, *gets ? gets : "none"));
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
