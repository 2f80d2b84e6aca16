/* base/names.c - validation of gateway names, derived resource names. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/names.h"
#include "base/xalloc.h"

static int is_alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A DNS label: what k8s takes for a node's name and docker for a name. */
static int name_check(const char *what, const char *name, os_error *err)
{
	size_t n = strlen(name);
	int ok = n >= 1 && n <= GATEWAY_NAME_MAX && is_alnum_lower(name[0]) &&
		 is_alnum_lower(name[n - 1]);

	for (size_t i = 0; ok && i < n; i++)
		ok = is_alnum_lower(name[i]) || name[i] == '-';
	if (!ok) {
		cleanup_free char *shown = printable(name, 64);
		return os_error_set(err, OS_EXIT_USAGE,
				    "invalid %s name '%s': use 1-%d lowercase letters, digits and '-', starting and ending with a letter or digit",
				    what, shown, GATEWAY_NAME_MAX);
	}
	return 0;
}

int gateway_name_check(const char *name, os_error *err)
{
	return name_check("gateway", name, err);
}

int node_name_check(const char *name, os_error *err)
{
	return name_check("node", name, err);
}

char *gateway_resource_name(const char *name) { return xasprintf("openshell-cluster-%s", name); }
char *gateway_hostname(const char *name) { return xasprintf("openshell-%s", name); }

enum owner labels_owner(const char *managed_by, const char *gateway_label, const char *name)
{
	return managed_by && strcmp(managed_by, LABEL_MANAGED_VALUE) == 0 && gateway_label &&
	       strcmp(gateway_label, name) == 0 ? OWNER_OURS : OWNER_FOREIGN;
}

char *labels_foreign_reason(const char *what, const char *object, const char *name)
{
	return xasprintf("%s %s exists but was not created by openshell (it lacks the labels %s=%s and %s=%s)",
			 what, object, LABEL_MANAGED, LABEL_MANAGED_VALUE, LABEL_GATEWAY, name);
}

char *printable(const char *s, size_t max)
{
	size_t len = strlen(s), o = 0;
	char *out = xmalloc(4 * (len < max ? len : max) + 4);

	for (size_t i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '\\')
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (len > max)
		memcpy(out + o, "...", 3), o += 3;
	out[o] = '\0';
	return out;
}
