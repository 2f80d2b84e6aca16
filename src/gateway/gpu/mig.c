/* gateway/gpu/mig.c - MIG strategies and resources (see gateway/gpu/mig.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "gateway/gpu/mig.h"

static const char *const strategy_names[] = { [MIG_NONE] = "none", [MIG_SINGLE] = "single", [MIG_MIXED] = "mixed" };

const char *mig_strategy_name(enum mig_strategy m)
{
	return m == MIG_UNSET ? "unset" : strategy_names[m];
}

int mig_strategy_parse(const char *text, enum mig_strategy *m, os_error *err)
{
	int i;

	if (parse_option_word("--mig-strategy", text, strategy_names,
			      (int)(sizeof(strategy_names) / sizeof(strategy_names[0])), &i, err) < 0)
		return -1;
	*m = (enum mig_strategy)i;
	return 0;
}

enum mig_strategy mig_strategy_of_env(const char *value)
{
	int i;

	if (value && parse_keyword(value, strategy_names, (int)(sizeof(strategy_names) / sizeof(strategy_names[0])), &i) == 0)
		return (enum mig_strategy)i;
	return MIG_NONE;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add one node's MIG resources in status.FIELD to the sums in out ("NAME=N"). */
static long long add_node(const cJSON *node, const char *field, struct strv *out)
{
	const cJSON *q;
	long long total = 0;

	cJSON_ArrayForEach(q, json_get(node, "status", field, NULL)) {
		char *end;
		long long n = cJSON_IsString(q) ? strtoll(q->valuestring, &end, 10) : -1;
		size_t len = strlen(q->string ? q->string : "");
		size_t i;

		if (!q->string || strncmp(q->string, MIG_RESOURCE_PREFIX, strlen(MIG_RESOURCE_PREFIX)) != 0 || n <= 0 || *end)
			continue;
		total += n;
		if (!out)
			continue;
		for (i = 0; i < out->n; i++)
			if (strncmp(out->v[i], q->string, len) == 0 && out->v[i][len] == '=') {
				char *sum = xasprintf("%s=%lld", q->string, atoll(out->v[i] + len + 1) + n);
				free(out->v[i]);
				out->v[i] = sum;
				break;
			}
		if (i == out->n)
			strv_pushf(out, "%s=%lld", q->string, n);
	}
	return total;
}

static long long add_nodes(const cJSON *nodes, const char *field, struct strv *out)
{
	const cJSON *items = json_get(nodes, "items", NULL);
	const cJSON *node;
	long long total = 0;

	if (!items && cJSON_IsObject(nodes))
		total = add_node(nodes, field, out);
	cJSON_ArrayForEach(node, items)
		total += add_node(node, field, out);
	return total;
}

long long mig_resources(const cJSON *nodes, struct strv *out)
{
	long long total = add_nodes(nodes, "allocatable", out);

	if (out && out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_name);
	return total;
}

long long mig_capacity(const cJSON *nodes)
{
	return add_nodes(nodes, "capacity", NULL);
}

long long mig_count(const struct strv *mig)
{
	long long total = 0;

	for (size_t i = 0; i < mig->n; i++)
		total += atoll(mig->v[i] + strcspn(mig->v[i], "=") + 1);
	return total;
}

cJSON *mig_resources_json(const struct strv *mig)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; i < mig->n; i++) {
		cleanup_free char *name = xstrndup(mig->v[i], strcspn(mig->v[i], "="));
		cJSON_AddNumberToObject(o, name, atof(mig->v[i] + strlen(name) + 1));
	}
	return o;
}
