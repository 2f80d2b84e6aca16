/* base/command.h - command lines as data: shown, named, looked up.
 *
 * The runner takes argv vectors; these helpers are everything else that is
 * done with one: the text a user could paste into a shell (for -v and for
 * messages; display only, nothing ever executes it), the short name a
 * one-line message uses ("docker inspect"), and the PATH lookup done before
 * anything runs, so that a missing program is named as such.
 */
#ifndef OPENSHELL_BASE_COMMAND_H
#define OPENSHELL_BASE_COMMAND_H

/* The command line, shell-quoted where needed. */
char *command_string(const char *const *argv);

/* argv[0]'s base name and, when it is not an option, argv[1]. */
char *command_short_name(const char *const *argv);

/* A name with a '/' is checked as is, others are looked up on PATH.
 * Returns a newly allocated path to an executable regular file, or NULL. */
char *command_find(const char *name);

#endif
