/* gateway/state/info.h - what `gateway status` and `gateway list` say about gateways.
 *
 * A gateway is known by its labelled container or by its metadata.json;
 * either may be gone while the other is left. gateway_known_names()
 * gathers the names from both sources, so a gateway whose metadata was
 * deleted, or whose container was removed behind openshell's back, is still
 * listed. The other helpers turn a looked-up gateway (gateway/state/lookup.h) into the
 * words and the JSON fields that both commands print alike.
 */
#ifndef OPENSHELL_GATEWAY_INFO_H
#define OPENSHELL_GATEWAY_INFO_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/strv.h"
#include "gateway/state/lookup.h"

/* Every gateway name openshell knows, sorted, without duplicates: the
 * org.openshell.gateway label of containers labelled as openshell's on
 * the daemon of Docker context CONTEXT (NULL: the process's), asked
 * within WITHIN_MS (0: docker's per-call limit), and the directories
 * under $XDG_CONFIG_HOME/openshell/gateways holding a metadata.json.
 * Names that are not valid gateway names are skipped. */
int gateway_known_names(const char *context, int within_ms, struct strv *names, os_error *err);

/* Docker's contexts, as `docker context ls` names them, asked within
 * WITHIN_MS: what --context may name. */
int gateway_docker_contexts(int within_ms, struct strv *names, os_error *err);

/* Add the names of the directories under $XDG_CONFIG_HOME/openshell/gateways
 * holding a metadata.json: what is known without asking Docker. */
int gateway_metadata_names(struct strv *names, os_error *err);

/* The docker arguments that list openshell's containers, one gateway
 * name a line, into args. */
void gateway_labelled_ps(struct strv *args);

/* Add the names in `docker ps --format '{{.Label ...}}'` output (one a
 * line) to names; empty and invalid lines are skipped. */
void gateway_names_add_lines(struct strv *names, const char *text);

/* Sort names and drop duplicates. */
void gateway_names_sort_unique(struct strv *names);

/* The container's state (running, exited, ...), "missing" when only the
 * metadata is left, or "unknown" when its daemon could not be asked. */
const char *gateway_state_word(const struct gateway *gw);

/* Why the metadata cannot be trusted, or NULL; a missing file counts. */
const char *gateway_metadata_problem(const struct gateway *gw);

/* The GPU selection the container holds (gw->gpus), or NULL without
 * GPUs or when it does not read. */
const struct gpus *gateway_gpus(const struct gateway *gw);

/* Add the fields status and list share: name, container, state, gpu, gpus
 * (gpus_json()), gpu_mode, mig_strategy, node_network, server, kubeconfig,
 * metadata_error (absent values as null). */
void gateway_json_common(cJSON *obj, const struct gateway *gw);

#endif
