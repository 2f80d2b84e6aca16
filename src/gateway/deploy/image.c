/* gateway/deploy/image.c - the cluster image: recipe, build, bundle, and getting
 * it before a start (see gateway/deploy/image.h). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/log.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/build.h"
#include "docker/client.h"
#include "docker/image.h"
#include "gateway/deploy/image.h"

#define VERSIONS_MAX (64 << 10)

/* An openshell run from its build tree builds from its source tree, so a
 * developer never builds the recipe an older `make install` left. */
static int running_uninstalled(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return 0;
	exe[n] = '\0';
	return strcmp(exe, OPENSHELL_BUILDDIR "/openshell") == 0;
}

char *image_context_dir(void)
{
	const char *env = getenv("OPENSHELL_IMAGE_CONTEXT");

	if (env && *env)
		return xstrdup(env);
	const char *dir = running_uninstalled() ? OPENSHELL_SRCDIR "/deploy" : OPENSHELL_PKGDATADIR "/deploy";
	char *canonical = realpath(dir, NULL);

	return canonical ? canonical : xstrdup(dir);
}

static int valid_key(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", s[i]))
			return 0;
	return 1;
}

static int valid_value(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || strchr("\"'`$\\", s[i]) || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

int image_versions(const char *dir, struct strv *pairs, os_error *err)
{
	cleanup_free char *path = xasprintf("%s/%s", dir, IMAGE_VERSIONS_FILE);
	cleanup_free char *text = NULL;
	size_t len = 0;
	int lineno = 0;

	if (read_file(path, VERSIONS_MAX, &text, &len, err) < 0)
		return os_error_wrap(err, "cannot read the image recipe's pins");
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n"), eq = strcspn(p, "=");
		lineno++;
		if (n > 0 && p[0] != '#') {
			if (eq >= n || !valid_key(p, eq) || !valid_value(p + eq + 1, n - eq - 1))
				return os_error_set(err, OS_EXIT_FAILURE,
						    "%s:%d: not a KEY=VALUE pin (KEY of A-Z, 0-9 and _; a value without spaces or quotes)",
						    path, lineno);
			strv_pushf(pairs, "%.*s", (int)n, p);
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* The build arguments: the pins, the version of openshell, then the
 * caller's overrides, each replacing a pin of the same name. */
static void build_args(const struct strv *pins, const struct strv *overrides, struct strv *args)
{
	for (size_t i = 0; i < pins->n; i++) {
		cleanup_free char *key = xstrndup(pins->v[i], strcspn(pins->v[i], "="));

		if (!strv_value(overrides, key))
			strv_push(args, pins->v[i]);
	}
	strv_push(args, "OPENSHELL_VERSION=" PACKAGE_VERSION);
	for (size_t j = 0; overrides && j < overrides->n; j++)
		strv_push(args, overrides->v[j]);
}

/* A failure to fetch is the one a user can fix by network settings. */
static int looks_like_network(const char *msg)
{
	static const char *const marks[] = { "dial tcp", "no such host", "Temporary failure resolving",
					     "Could not resolve", "cannot download", "cannot fetch image",
					     "TLS handshake", "i/o timeout", "connection refused", NULL };

	for (size_t i = 0; msg && marks[i]; i++)
		if (strstr(msg, marks[i]))
			return 1;
	return 0;
}

int image_build(const struct image_build_opts *o, os_error *err)
{
	cleanup_free char *dir = image_context_dir();
	cleanup_free char *dockerfile = xasprintf("%s/%s", dir, IMAGE_DOCKERFILE);
	struct strv pins = { 0 }, args = { 0 };
	int rc = -1;

	if (access(dockerfile, R_OK) < 0) {
		os_error_set(err, OS_EXIT_FAILURE,
			     "the cluster image's recipe is not at %s; reinstall openshell ('make install' puts it there) or point OPENSHELL_IMAGE_CONTEXT at a copy of deploy/",
			     dockerfile);
		goto out;
	}
	if (image_versions(dir, &pins, err) < 0)
		goto out;
	build_args(&pins, o->build_args, &args);
	struct build_request rq = {
		.on = o->on, .context = dir, .dockerfile = IMAGE_DOCKERFILE, .tag = o->tag, .build_args = &args,
		.pull = o->pull, .no_cache = o->no_cache, .network = o->network,
		.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : IMAGE_BUILD_TIMEOUT_MS,
	};
	log_step("building image %s from %s", o->tag, dir);
	if (docker_build(&rq, err) < 0) {
		if (looks_like_network(err->msg))
			os_error_add_fix(err, "the build downloads k3s, NVIDIA's toolkit packages, the device-plugin chart and images: check this host's network access (or give a proxy with --build-arg HTTPS_PROXY=...), then build again");
		goto out;
	}
	log_step_done(1);
	rc = 0;
out:
	strv_free(&pins);
	strv_free(&args);
	return rc;
}

static int pull(const struct docker_target *on, const char *ref, const struct deadline *by, os_error *err)
{
	const char *args[] = { "pull", "--", ref, NULL };
	struct deadline whole = deadline_capped(by, 0);

	log_step("pulling %s", ref);
	/* A pull legitimately takes long: it gets what is left of the overall
	 * deadline rather than the per-call one. */
	if (docker_ok(on, args, deadline_call_ms(&whole), err) < 0)
		return os_error_add_fix(err,
					   "check the reference and your access to its registry ('docker login'), or drop --image to use the default image, which openshell builds");
	log_step_done(1);
	return 0;
}

int image_present(const struct docker_target *on, const char *ref, const struct deadline *by, int *present,
		  os_error *err)
{
	struct docker_image img;

	if (image_inspect(on, ref, by ? deadline_call_ms(by) : 0, &img, err) < 0)
		return os_error_wrap(err, "cannot look for image %s", ref);
	*present = img.exists;
	docker_image_free(&img);
	return 0;
}

int image_fetch(const struct docker_target *on, const char *ref, int explicit_ref, int no_build,
		const struct deadline *by, os_error *err)
{
	if (explicit_ref)
		return pull(on, ref, by, err) < 0 ? os_error_wrap(err, "cannot get image %s", ref) : 0;
	if (no_build)
		return os_error_set(err, OS_EXIT_FAILURE,
				    "image %s is not built yet; build it with 'openshell image build' (or leave out --no-build, and start builds it)",
				    ref);
	log_info("image %s is not here yet: building it once from the recipe openshell installed (later starts reuse it)",
		 ref);
	struct image_build_opts bo = { .on = on, .tag = ref, .timeout_ms = IMAGE_BUILD_TIMEOUT_MS };
	return image_build(&bo, err);
}

int image_find_cluster(const struct docker_target *on, int timeout_ms, char **ref, os_error *err)
{
	const char *args[] = { "images", "--filter", "label=" IMAGE_LABEL_KIND "=cluster", "--filter", "dangling=false",
			       "--format", "{{.Repository}}:{{.Tag}}", NULL };
	struct run_result res = { 0 };

	*ref = NULL;
	if (docker_run_ok(on, args, NULL, 0, timeout_ms, &res, err) < 0) {
		run_result_free(&res);
		return os_error_wrap(err, "cannot list the cluster images here");
	}
	/* The newest first, as docker lists them; one known by its digest
	 * alone has no tag to name it by. */
	for (const char *p = res.out; *p && !*ref; p += strspn(p, "\n")) {
		size_t n = strcspn(p, "\n");

		if (!memmem(p, n, "<none>", 6))
			*ref = xstrndup(p, n);
		p += n;
	}
	run_result_free(&res);
	return 0;
}

/* The file a bundled image is kept in: its reference less any digest, with
 * '/' and ':' as '_', and ".tar" (deploy/docker/image-stage.sh names them so). */
static char *archive_name(const char *ref)
{
	char *name = xasprintf("%.*s.tar", (int)strcspn(ref, "@"), ref);

	for (char *p = name; *p; p++)
		if (*p == '/' || *p == ':')
			*p = '_';
	return name;
}

/* The files of the image's bundle, listed by `ls` run in the image: the
 * labels say what the build fetched, the files say what is there. */
static int bundle_files(const char *ref, struct strv *files, os_error *err)
{
	const char *args[] = { "run", "--rm", "--network=none", "--entrypoint=ls", "--", ref, "-1",
			       "/opt/openshell/charts", "/opt/openshell/images", NULL };
	struct run_result res = { 0 };
	int rc = 0;

	/* ls fails for a missing directory and still lists the other one. */
	if (docker_run(NULL, args, NULL, 0, 0, &res, err) < 0)
		rc = -1;
	for (const char *p = res.out; rc == 0 && *p;) {
		size_t n = strcspn(p, "\n");
		if (n && p[n - 1] != ':')
			strv_pushf(files, "%.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
	run_result_free(&res);
	return rc;
}

static int has_file(const struct strv *files, const char *name)
{
	for (size_t i = 0; i < files->n; i++)
		if (strcmp(files->v[i], name) == 0)
			return 1;
	return 0;
}

/* The first name of a space-separated label value missing from files. */
static char *first_missing(const struct strv *files, const char *names, int images)
{
	for (const char *s = names; s && *s; s += strspn(s, " ")) {
		size_t n = strcspn(s, " ");
		cleanup_free char *word = xstrndup(s, n);
		char *file = images ? archive_name(word) : xstrdup(word);

		s += n;
		if (!has_file(files, file)) {
			char *why = xasprintf("its bundle lacks %s%s%s%s", word, images ? " (" : "",
					      images ? file : "", images ? ")" : "");
			free(file);
			return why;
		}
		free(file);
	}
	return NULL;
}

int image_self_contained(const char *ref, const struct docker_image *img, char **why, os_error *err)
{
	struct strv files = { 0 };
	const char *charts = image_label(img, "org.openshell.bundle.charts");
	const char *images = image_label(img, "org.openshell.bundle.images");
	const char *airgap = image_label(img, "org.openshell.bundle.k3s-airgap");

	*why = NULL;
	if (!image_label(img, IMAGE_LABEL_KIND)) {
		*why = xstrdup("it has no openshell labels: 'openshell image build' did not make it, so a start may need network");
		return 0;
	}
	if (!charts || !images || !airgap) {
		*why = xstrdup("an older openshell built it, without a bundle: rebuild it with 'openshell image build'");
		return 0;
	}
	if (bundle_files(ref, &files, err) < 0)
		return os_error_wrap(err, "cannot list the bundle of image %s", ref);
	if (!(*why = first_missing(&files, charts, 0)) && !(*why = first_missing(&files, airgap, 0)))
		*why = first_missing(&files, images, 1);
	strv_free(&files);
	return *why == NULL;
}

/* Label, its name in the text and in the JSON. */
static const struct {
	const char *label, *text, *json;
} facts[] = {
	{ "org.openshell.version", "openshell", "openshell_version" },
	{ "org.openshell.base-image", "base", "base_image" },
	{ "org.openshell.k3s-version", "k3s", "k3s_version" },
	{ "org.openshell.nvidia-container-toolkit-version", "toolkit", "nvidia_container_toolkit_version" },
	{ "org.openshell.nvidia-runtime-mode", "runtime mode", "nvidia_runtime_mode" },
	{ "org.openshell.device-plugin-chart-version", "device plugin", "device_plugin_chart_version" },
	{ "org.openshell.dra-driver-chart-version", "DRA driver", "dra_driver_chart_version" },
	{ IMAGE_LABEL_SMOKE, "smoke image", "smoke_image" },
	{ "org.openshell.bundle.charts", "bundled charts", "bundled_charts" },
	{ "org.openshell.bundle.images", "bundled images", "bundled_images" },
	{ "org.openshell.bundle.k3s-airgap", "k3s airgap", "k3s_airgap" },
};

int image_read(const char *ref, struct image_facts *f, os_error *err)
{
	memset(f, 0, sizeof(*f));
	if (image_inspect(NULL, ref, 0, &f->img, err) < 0)
		return -1;
	if (!f->img.exists)
		return 0;
	f->k3s = image_label(&f->img, "org.openshell.k3s-version");
	f->chart = image_label(&f->img, "org.openshell.device-plugin-chart-version");
	return (f->self_contained = image_self_contained(ref, &f->img, &f->why, err)) < 0 ? -1 : 0;
}

void image_facts_free(struct image_facts *f)
{
	docker_image_free(&f->img);
	free(f->why);
	memset(f, 0, sizeof(*f));
}

void image_describe(const char *ref, const struct image_facts *f, FILE *out)
{
	const struct docker_image *img = &f->img;

	fprintf(out, "%-16s %s\n", "image", ref);
	fprintf(out, "%-16s %s\n", "id", img->id ? img->id : "-");
	fprintf(out, "%-16s %s\n", "created", img->created ? img->created : "-");
	if (img->size >= 0)
		fprintf(out, "%-16s %.1f MB\n", "size", (double)img->size / 1e6);
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		const char *v = image_label(img, facts[i].label);
		fprintf(out, "%-16s %s\n", facts[i].text, v ? v : "-");
	}
	if (f->self_contained)
		fprintf(out, "%-16s yes\n", "self-contained");
	else
		fprintf(out, "%-16s no: %s\n", "self-contained", f->why);
}

/* "a b" -> ["a", "b"]: the bundle labels list names separated by spaces. */
static cJSON *words(const char *s)
{
	cJSON *arr = cJSON_CreateArray();

	while (s && *s) {
		size_t n = strcspn(s, " ");
		if (n) {
			cleanup_free char *w = xstrndup(s, n);
			cJSON_AddItemToArray(arr, cJSON_CreateString(w));
		}
		s += n + strspn(s + n, " ");
	}
	return arr;
}

cJSON *image_describe_json(cJSON *o, const char *ref, const struct image_facts *f)
{
	const struct docker_image *img = &f->img;

	cJSON_AddStringToObject(o, "image", ref);
	json_add_string_or_null(o, "id", img->id);
	json_add_string_or_null(o, "created", img->created);
	json_add_count_or_null(o, "size_bytes", img->size);
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		const char *v = image_label(img, facts[i].label);
		if (strncmp(facts[i].label, "org.openshell.bundle.", 21) == 0 && v)
			cJSON_AddItemToObject(o, facts[i].json, words(v));
		else
			json_add_string_or_null(o, facts[i].json, v);
	}
	cJSON_AddBoolToObject(o, "self_contained", f->self_contained);
	json_add_string_or_null(o, "not_self_contained_because", f->why);
	return o;
}

int image_named(const char *ref)
{
	return strcmp(ref, IMAGE_DEFAULT_TAG) != 0;
}
