/* cmd/commands.h - the entry point of every command, one file each.
 *
 * Each takes (argc, argv) with argv[0] its own name, parses its options,
 * and returns the process exit status (base/exitcode.h).
 */
#ifndef OPENSHELL_CMD_COMMANDS_H
#define OPENSHELL_CMD_COMMANDS_H

int cmd_gateway(int argc, char **argv);
int cmd_gateway_start(int argc, char **argv);
int cmd_gateway_verify(int argc, char **argv);
int cmd_gateway_status(int argc, char **argv);
int cmd_gateway_list(int argc, char **argv);
int cmd_gateway_stop(int argc, char **argv);
int cmd_gateway_destroy(int argc, char **argv);
int cmd_gateway_logs(int argc, char **argv);
int cmd_gateway_exec(int argc, char **argv);
int cmd_gateway_kubectl(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_image_build(int argc, char **argv);
int cmd_image_info(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* The option parsing of `gateway start`, apart so that it can be tested:
 * fills o from argv; returns -1 to go on, or the exit status to end with
 * (0 after --help, OS_EXIT_USAGE after a bad option or value). */
struct deploy_opts;
int gateway_start_parse(int argc, char **argv, struct deploy_opts *o);

#endif
