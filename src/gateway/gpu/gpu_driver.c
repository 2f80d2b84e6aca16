/* gateway/gpu/gpu_driver.c - the driver's list of GPUs (see gateway/gpu/gpu_driver.h). */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "gateway/gpu/gpu_driver.h"

struct driver_gpu {
	char *bus, *uuid, *name;
};

static struct driver_gpu *gpu_of_bus(struct driver_gpu **v, size_t *n, const char *bus)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].bus, bus) == 0)
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n] = (struct driver_gpu){ .bus = xstrdup(bus) };
	return &(*v)[(*n)++];
}

/* The bus IDs are the driver's "%04x:%02x:%02x.%x": their text's order is
 * their numbers'. */
static int by_bus(const void *a, const void *b)
{
	return strcmp(((const struct driver_gpu *)a)->bus, ((const struct driver_gpu *)b)->bus);
}

/* "BUS uuid GPU-…" or "BUS model NAME" into the GPU of that bus. */
static void parse_line(char *line, struct driver_gpu **v, size_t *n)
{
	char *key = strchr(line, ' '), *value;

	if (!key || !(value = strchr(key + 1, ' ')))
		return;
	*key++ = '\0';
	*value++ = '\0';
	if (strcmp(key, "uuid") == 0 || strcmp(key, "model") == 0) {
		struct driver_gpu *g = gpu_of_bus(v, n, line);
		char **slot = strcmp(key, "uuid") == 0 ? &g->uuid : &g->name;

		free(*slot);
		*slot = xstrdup(value);
	}
}

/* After MARK and a space, or NULL. */
static const char *after_mark(const char *line, const char *mark)
{
	size_t n = strlen(mark);

	return strncmp(line, mark, n) == 0 && line[n] == ' ' ? line + n + 1 : NULL;
}

/* "GPU MINOR MINOR ...": GPU's MIG capabilities. */
static void parse_caps(const char *words, struct gpu_driver *d)
{
	char *end;
	long gpu = strtol(words, &end, 10), minor;

	if (end == words)
		return;
	for (words = end; (minor = strtol(words, &end, 10)), end != words; words = end) {
		d->caps = xrealloc(d->caps, (d->n_caps + 1) * sizeof(*d->caps));
		d->caps[d->n_caps++] = (struct gpu_cap){ .minor = (int)minor, .gpu = (int)gpu };
	}
}

/* "nvidia0 nvidia-caps/nvidia-cap12 ...": the nodes the container has. */
static void parse_nodes(const char *words, struct gpu_driver *d)
{
	cleanup_free char *copy = xstrdup(words);
	char *save = NULL;
	const char *cap = "nvidia-caps/nvidia-cap";

	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strncmp(w, cap, strlen(cap)) == 0) {
			int minor = atoi(w + strlen(cap));
			for (size_t i = 0; i < d->n_caps; i++)
				d->caps[i].held |= d->caps[i].minor == minor;
		} else if (strncmp(w, "nvidia", 6) == 0 && w[6] >= '0' && w[6] <= '9') {
			strv_push(&d->gpu_nodes, w + 6);
		}
	}
}

void gpu_driver_parse(const char *text, struct gpu_driver *d)
{
	cleanup_free char *copy = xstrdup(text);
	struct driver_gpu *v = NULL;
	size_t n = 0;
	char *save = NULL, *line = strtok_r(copy, "\n", &save);

	memset(d, 0, sizeof(*d));
	while (line && strncmp(line, GPU_DRIVER_MARK " ", strlen(GPU_DRIVER_MARK) + 1) != 0)
		line = strtok_r(NULL, "\n", &save);
	if (!line)
		return;
	const char *view = line + strlen(GPU_DRIVER_MARK) + 1;
	d->view = strcmp(view, "own") == 0 ? GPU_DRIVER_OWN : strcmp(view, "toolkit") == 0 ? GPU_DRIVER_TOOLKIT : GPU_DRIVER_UNREAD;
	while ((line = strtok_r(NULL, "\n", &save))) {
		const char *words;

		if ((words = after_mark(line, GPU_CAPS_MARK)))
			parse_caps(words, d);
		else if ((words = after_mark(line, GPU_NODES_MARK)))
			parse_nodes(words, d);   /* the last: the caps are known */
		else
			parse_line(line, &v, &n);
	}
	if (n)
		qsort(v, n, sizeof(*v), by_bus);
	for (size_t i = 0; i < n; i++) {
		if (v[i].uuid) {
			strv_push(&d->uuids, v[i].uuid);
			strv_push(&d->names, v[i].name ? v[i].name : "");
		}
		free(v[i].bus);
		free(v[i].uuid);
		free(v[i].name);
	}
	free(v);
}

void gpu_driver_free(struct gpu_driver *d)
{
	strv_free(&d->uuids);
	strv_free(&d->names);
	strv_free(&d->gpu_nodes);
	free(d->caps);
	memset(d, 0, sizeof(*d));
}

/* The open modules say "Open Kernel Module for x86_64  550.54.15", the
 * proprietary ones "Kernel Module  550.54.15": the first word after it
 * that is a version. */
char *gpu_driver_module_version(const char *line)
{
	const char *p = line ? strstr(line, "Kernel Module") : NULL;

	for (p = p ? p + strlen("Kernel Module") : NULL; p && *p; p += strcspn(p, " \t")) {
		size_t n;

		p += strspn(p, " \t");
		n = strspn(p, "0123456789.");
		if (n && isdigit((unsigned char)*p) && memchr(p, '.', n) && (!p[n] || p[n] == ' ' || p[n] == '\t'))
			return xstrndup(p, n);
	}
	return NULL;
}
