/* cmd/version.c - `openshell version`: what a bug report needs to say.
 *
 * openshell's version; the cluster image a start uses by default, with the
 * pins of the recipe that builds it (versions.env); and whether Docker has
 * that image. Changes nothing. Everything it knows is printed even when
 * Docker cannot be asked; that is reported last, with Docker's exit status.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"

/* The pins a report names: the versions.env key, its words, and its JSON
 * key, the one `image info --json` gives the same fact. */
static const struct {
	const char *key, *words, *json;
} shown[] = {
	{ "K3S_VERSION", "k3s", "k3s_version" },
	{ "NVIDIA_CONTAINER_TOOLKIT_VERSION", "NVIDIA Container Toolkit", "nvidia_container_toolkit_version" },
	{ "DEVICE_PLUGIN_CHART_VERSION", "device plugin chart", "device_plugin_chart_version" },
	{ "DEVICE_PLUGIN_IMAGE", "device plugin image", "device_plugin_image" },
	{ "DRA_DRIVER_CHART_VERSION", "DRA driver chart", "dra_driver_chart_version" },
	{ "DRA_DRIVER_IMAGE", "DRA driver image", "dra_driver_image" },
	{ "SMOKE_IMAGE", "smoke image", "smoke_image" },
};

#define NSHOWN (sizeof(shown) / sizeof(shown[0]))

struct report {
	const char *ref;      /* the default cluster image */
	char *recipe;         /* its recipe's directory */
	struct strv pins;     /* KEY=VALUE of versions.env; empty when unreadable */
	int present;          /* 1, 0, or -1: Docker could not be asked */
};

static const char *presence(int present)
{
	return present > 0 ? "present" : present == 0 ? "not built yet: 'openshell image build'" : "unknown";
}

static void print_text(const struct report *r)
{
	printf("openshell %s\n", PACKAGE_VERSION);
	printf("cluster image %s (%s)\n", r->ref, presence(r->present));
	printf("  %-26s %s\n", "recipe", r->recipe);
	for (size_t i = 0; i < NSHOWN; i++) {
		const char *v = strv_value(&r->pins, shown[i].key);
		printf("  %-26s %s\n", shown[i].words, v ? v : "?");
	}
}

static void print_json(const struct report *r)
{
	cJSON *o = json_document();
	cJSON *img, *pins;

	cJSON_AddStringToObject(o, "openshell_version", PACKAGE_VERSION);
	img = cJSON_AddObjectToObject(o, "cluster_image");
	cJSON_AddStringToObject(img, "image", r->ref);
	if (r->present < 0)
		cJSON_AddNullToObject(img, "present");
	else
		cJSON_AddBoolToObject(img, "present", r->present);
	cJSON_AddStringToObject(img, "recipe", r->recipe);
	pins = cJSON_AddObjectToObject(img, "pins");
	for (size_t i = 0; i < NSHOWN; i++)
		json_add_string_or_null(pins, shown[i].json, strv_value(&r->pins, shown[i].key));
	json_print_stdout(o);
}


enum { OPT_JSON = 256 };

static const struct cli_opt version_opts[] = {
	{ .name = "json", .key = OPT_JSON,
	  .help = "print one JSON object on stdout" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec version_spec = {
	.name = "version",
	.summary = "show versions: openshell, the cluster image's pins",
	.about = "Show openshell's version, the cluster image a start uses by default\n"
		 "($OPENSHELL_CLUSTER_IMAGE, else the one 'openshell image build' makes),\n"
		 "the versions its recipe pins, and whether Docker has that image: what a\n"
		 "bug report needs. 'openshell image info' shows what an image holds.\n",
	.opts = version_opts,
	.after = "Exit status 0; 1 when the recipe cannot be read, 3 when Docker cannot be\n"
		 "asked about the image (all else is printed first).\n",
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &version_spec };
	struct report r = { .present = -1 };
	os_error recipe_err = { 0 }, docker_err = { 0 };
	int json = 0, present, rc = OS_EXIT_OK;

	while (cli_next_option(&p, argc, argv) != -1)
		json = 1;   /* --json is the only option of its own */
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("version", argc, argv)) >= 0)
		return rc;
	r.ref = gateway_default_image();
	r.recipe = image_context_dir();
	image_versions(r.recipe, &r.pins, &recipe_err);
	if (image_present(NULL, r.ref, NULL, &present, &docker_err) == 0)
		r.present = present;
	if (json)
		print_json(&r);
	else
		print_text(&r);
	rc = OS_EXIT_OK;
	if (recipe_err.msg)
		rc = log_error_report(&recipe_err);
	if (docker_err.msg) {
		int drc = log_error_report(&docker_err);
		rc = rc == OS_EXIT_OK ? drc : rc;
	}
	strv_free(&r.pins);
	free(r.recipe);
	os_error_clear(&recipe_err);
	os_error_clear(&docker_err);
	return rc;
}
