/* commands.h - the entry point of every command, one file each.
 *
 * Each takes (argc, argv) with argv[0] its own name, parses its options,
 * and returns the process exit status (exitcode.h).
 */
#ifndef OPENSHELL_COMMANDS_H
#define OPENSHELL_COMMANDS_H

int cmd_gateway(int argc, char **argv);
int cmd_gateway_start(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

#endif
