/* gateway/verify/verify_create.c - the script that makes verify's pods (see gateway/verify/verify_checks.h).
 *
 * It is the pods' watch's THEN (kube/watch.h): one kubectl create of
 * their List, with the GPU look beside it when there is one, and a last
 * line with the first object's resourceVersion, from which the claims'
 * watch starts (verify_claims_from()).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "gateway/verify/verify_checks.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

#define SINCE_MARK "openshell-created-since"

/* create, not apply: the names are new (no read of each first); the
 * manifest is the code's own, so the API's field validation is skipped
 * (kubectl fetches the server's OpenAPI for it). It says each object's
 * resourceVersion, a space after each. */
static char *create_command(int request_s)
{
	return xasprintf("kubectl --request-timeout=%ds create --validate=false -f - "
			 "-o 'jsonpath={.metadata.resourceVersion} '", request_s);
}

/* With a LOOK, that runs beside the create (in the background, with no
 * stdin, so that nothing of the manifest goes to it); the status is the
 * create's, the mark's line the last. */
char *verify_create_script(int request_s, const char *look)
{
	cleanup_free char *create = create_command(request_s);
	static const char since[] = "set -f; set -- $o; echo \"" SINCE_MARK " ${1-}\"";

	if (!look)
		return xasprintf("o=$(%s) || exit; %s", create, since);
	return xasprintf("{ %s; } </dev/null & l=$!; o=$(%s); s=$?; wait $l; [ $s = 0 ] || exit $s; %s", look, create,
			 since);
}

/* Made again, the first object may exist already, and says no version:
 * the template's is read after (any claim is made after its template). */
char *verify_create_again_script(int request_s, const char *tmpl)
{
	cleanup_free char *create = create_command(request_s);
	cleanup_free char *since = tmpl ? xasprintf("; echo \"" SINCE_MARK " $(kubectl --request-timeout=%ds get "
						    "resourceclaimtemplates.resource.k8s.io '%s' --namespace " SMOKE_NAMESPACE
						    " -o 'jsonpath={.metadata.resourceVersion}')\"", request_s, tmpl)
					: NULL;

	return xasprintf("e=$(%s 2>&1 >/dev/null) || ! printf '%%s\\n' \"$e\" | "
			 "grep -v -e '(AlreadyExists)' -e '^[EWI][0-9]\\{4\\} ' >&2 || exit 1%s",
			 create, since ? since : "");
}

int verify_create_early(const char *said, int runtime_class)
{
	return kube_said_api_starting(said) ||
	       (runtime_class && strstr(said, "pod rejected: RuntimeClass \"" NVIDIA_RUNTIME_CLASS "\" not found"));
}

char *verify_created_since(char *text)
{
	static const char mark[] = SINCE_MARK " ";
	char *at = text, *rv = NULL;

	while (at && (at = strstr(at, mark)) && at != text && at[-1] != '\n')
		at++;
	if (!at)
		return NULL;
	at[strcspn(at, "\n")] = '\0';
	if (at[sizeof(mark) - 1])
		rv = xstrdup(at + sizeof(mark) - 1);
	*at = '\0';
	return rv;
}
