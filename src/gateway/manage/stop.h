/* gateway/manage/stop.h - a gateway stopped, its state kept.
 *
 * The agents on other hosts stop first, so none is left retrying a
 * server that is gone; then the server's container, which k3s gets
 * GATEWAY_STOP_GRACE_S to leave before docker kills it. Under the
 * gateway's lock, so a start of it never runs between the lookup and
 * the stop. A stopped gateway's stop succeeds; one without a container
 * is OS_EXIT_NOTFOUND, naming destroy. */
#ifndef OPENSHELL_GATEWAY_STOP_H
#define OPENSHELL_GATEWAY_STOP_H

#include "base/error.h"

#define GATEWAY_STOP_GRACE_S 10

int gateway_stop(const char *name, os_error *err);

#endif
