/* gateway/image.h - the cluster image a gateway runs: at hand before the
 * container is made.
 *
 * image_ensure() looks for the image on the daemon and pulls it when the
 * reference names a registry; an image that is absent and cannot be pulled
 * is one error naming the reference and what to do, before anything of the
 * gateway is created.
 */
#ifndef OPENSHELL_GATEWAY_IMAGE_H
#define OPENSHELL_GATEWAY_IMAGE_H

#include "base/error.h"

/* deadline: the clock_ms() time of the start's overall deadline; a pull
 * gets what is left of it (timeout_ms: the overall timeout), a look-up the
 * per-call deadline within it. */
int image_ensure(const char *ref, long long deadline, int timeout_ms, os_error *err);

#endif
