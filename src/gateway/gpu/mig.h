/* gateway/gpu/mig.h - MIG: `--mig-strategy none|single|mixed`.
 *
 * The strategy goes to the NVIDIA device plugin's chart (its value
 * migStrategy, through the entrypoint: cluster-entrypoint.sh). With none a
 * MIG-enabled GPU counts as one nvidia.com/gpu; single advertises each MIG
 * device as an nvidia.com/gpu (every GPU must be MIG-enabled with one
 * profile); mixed advertises each profile as a resource of its own,
 * nvidia.com/mig-<profile> (1g.10gb, ...), beside the whole GPUs'
 * nvidia.com/gpu. A kept gateway keeps its strategy.
 */
#ifndef OPENSHELL_GATEWAY_MIG_H
#define OPENSHELL_GATEWAY_MIG_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/strv.h"

#define MIG_RESOURCE_PREFIX "nvidia.com/mig-"

/* MIG_UNSET: a request that names none (gateway/deploy/deploy.h); no
 * container or plugin ever has it. */
enum mig_strategy { MIG_UNSET = -1, MIG_NONE, MIG_SINGLE, MIG_MIXED };

/* "none", "single" or "mixed"; a usage error otherwise. */
int mig_strategy_parse(const char *text, enum mig_strategy *m, os_error *err);
const char *mig_strategy_name(enum mig_strategy m);

/* The strategy a container's OPENSHELL_MIG_STRATEGY (NULL: none) gave the
 * entrypoint; one it would not take is none. */
enum mig_strategy mig_strategy_of_env(const char *value);

/* The MIG resources the nodes of a NodeList (or one Node) advertise as
 * allocatable (more than 0), "nvidia.com/mig-1g.10gb=2" each, sorted, in
 * OUT unless it is NULL; their total. */
long long mig_resources(const cJSON *nodes, struct strv *out);

/* The MIG devices they hold, healthy or not: the kubelet's capacity. */
long long mig_capacity(const cJSON *nodes);

/* Their total. */
long long mig_count(const struct strv *mig);

/* Those resources as --json gives them: {"nvidia.com/mig-1g.10gb": 2, …}. */
cJSON *mig_resources_json(const struct strv *mig);

#endif
