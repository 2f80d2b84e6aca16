/* gateway/start/start_look.c - a start's first look (see gateway/start/start_look.h). */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "docker/inspect_any.h"
#include "docker/target.h"
#include "gateway/start/start_look.h"

int start_look(const struct docker_ctr *ctr, const char *gateway, const char *image, int timeout_ms,
	       struct start_look *l, struct gw_container *c, os_error *err)
{
	const char *names[] = { ctr->name, image };
	struct docker_found f[2];
	const cJSON *labels;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	start_look_free(l);
	*l = (struct start_look){ .ctr = ctr, .gateway = gateway, .image = image, .net_owner = LOOK_NOT_KNOWN,
				  .vol_owner = LOOK_NOT_KNOWN, .image_here = LOOK_NOT_KNOWN };
	if (docker_inspect_any(ctr->on, names, 2, timeout_ms, f, err) < 0) {
		rc = -1;
		goto out;
	}
	labels = f[0].obj ? json_get(f[0].obj, "Labels", NULL) : NULL;
	switch (f[0].kind) {
	case DOCKER_CONTAINER:
		rc = container_parse_object(f[0].obj, c, err);
		break;
	case DOCKER_MISSING:
		l->net_owner = l->vol_owner = OWNER_ABSENT;
		break;
	case DOCKER_NETWORK:
		l->net_owner = docker_labels_owner(labels, gateway);
		break;
	case DOCKER_VOLUME:
		l->net_owner = OWNER_ABSENT;
		l->vol_owner = docker_labels_owner(labels, gateway);
		break;
	default:   /* an image or another object of the name: no container */
		break;
	}
	/* Anything else of the image's name (a container, say) is asked again, as an image. */
	if (f[1].kind == DOCKER_IMAGE || f[1].kind == DOCKER_MISSING)
		l->image_here = f[1].kind == DOCKER_IMAGE;
	/* Kept for the checks of what the image holds (gateway/deploy/image_fit.h). */
	if (f[1].kind == DOCKER_IMAGE) {
		const cJSON *il = json_get(f[1].obj, "Config", "Labels", NULL);
		l->image_labels = cJSON_IsObject(il) ? cJSON_Duplicate(il, 1) : cJSON_CreateObject();
	}
out:
	docker_found_free(f, 2);
	return rc;
}

int start_look_image(const struct start_look *l, const char *image)
{
	return l->image && strcmp(l->image, image) == 0 ? l->image_here : LOOK_NOT_KNOWN;
}

int start_look_owner(const struct start_look *l, const char *type, int timeout_ms, enum owner *out, os_error *err)
{
	int known = strcmp(type, "volume") == 0 ? l->vol_owner : l->net_owner;

	if (known != LOOK_NOT_KNOWN) {
		*out = (enum owner)known;
		return 0;
	}
	return docker_object_owner(l->ctr->on, type, l->ctr->name, l->gateway, timeout_ms, out, err);
}

const cJSON *start_look_image_labels(const struct start_look *l, const char *image)
{
	return l->image && strcmp(l->image, image) == 0 ? l->image_labels : NULL;
}

void start_look_free(struct start_look *l)
{
	cJSON_Delete(l->image_labels);
	l->image_labels = NULL;
}

void start_look_forget(struct start_look *l)
{
	l->net_owner = l->vol_owner = LOOK_NOT_KNOWN;
}
