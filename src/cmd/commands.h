/* cmd/commands.h - every command's spec, one file each (cmd/cli.h).
 *
 * A spec's run() takes (argc, argv) with argv[0] its own name, parses its
 * options from the spec's table, and returns the process exit status
 * (base/exitcode.h).
 */
#ifndef OPENSHELL_CMD_COMMANDS_H
#define OPENSHELL_CMD_COMMANDS_H

#include "cmd/cli.h"

extern const struct cli_spec gateway_spec;
extern const struct cli_spec gateway_start_spec;
extern const struct cli_spec gateway_verify_spec;
extern const struct cli_spec gateway_status_spec;
extern const struct cli_spec gateway_gpus_spec;
extern const struct cli_spec gateway_list_spec;
extern const struct cli_spec gateway_stop_spec;
extern const struct cli_spec gateway_destroy_spec;
extern const struct cli_spec gateway_logs_spec;
extern const struct cli_spec gateway_exec_spec;
extern const struct cli_spec gateway_kubectl_spec;
extern const struct cli_spec gateway_node_spec;
extern const struct cli_spec gateway_node_add_spec;
extern const struct cli_spec gateway_node_list_spec;
extern const struct cli_spec gateway_node_remove_spec;
extern const struct cli_spec doctor_spec;
extern const struct cli_spec image_spec;
extern const struct cli_spec image_build_spec;
extern const struct cli_spec image_info_spec;
extern const struct cli_spec version_spec;
extern const struct cli_spec completion_spec;
extern const struct cli_spec complete_spec;   /* hidden: what completion scripts call */
extern const struct cli_spec manpage_spec;    /* hidden: the build's man page filler */

/* The option parsing of `gateway start`, apart so that it can be tested:
 * fills RQ (and *JSON, for --json) from argv; returns -1 to go on, or the exit status to end with
 * (0 after --help, OS_EXIT_USAGE after a bad option or value). */
struct gateway_request;
int gateway_start_parse(int argc, char **argv, struct gateway_request *rq, int *json);

#endif
