/* kube/user_kubeconfig.h - the user's own kubeconfig: a gateway merged
 * into it, and taken out of it again.
 *
 * The file is the first one $KUBECONFIG names, else ~/.kube/config (a
 * symlink is followed to the file it names). Every change holds kubectl's
 * own lock, FILE.lock made with O_EXCL (client-go's clientcmd does the
 * same), so two openshells, or openshell and kubectl, never lose each
 * other's writes; the old file is first copied to FILE.openshell-backup
 * (0600); both writes are atomic.
 */
#ifndef OPENSHELL_KUBE_USER_KUBECONFIG_H
#define OPENSHELL_KUBE_USER_KUBECONFIG_H

#include <stddef.h>

#include "base/error.h"

/* How long a change waits for another holder of the lock. */
#define USER_KUBECONFIG_LOCK_WAIT_MS 10000

/* Merge a gateway's kubeconfig (kube/kubeconfig.h's kubeconfig_merge).
 * *path and *backup (NULL when there was no file) are set to report. */
int kubeconfig_update_user(const char *text, size_t len, char **path, char **backup, os_error *err);

/* Remove the entries named `name` from the file at path (the one
 * kubeconfig_update_user() reported). *changed is 0 when there were none
 * (or no file); *backup is then NULL. */
int kubeconfig_remove_user(const char *path, const char *name, int *changed, char **backup, os_error *err);

#endif
