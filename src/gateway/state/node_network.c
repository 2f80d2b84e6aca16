/* gateway/state/node_network.c - flannel's backend between hosts (see gateway/state/node_network.h). */
#include "config.h"

#include <string.h>

#include "base/parse.h"
#include "gateway/state/node_network.h"

static const char *const network_names[] = { [NODE_NETWORK_VXLAN] = "vxlan", [NODE_NETWORK_WIREGUARD] = "wireguard" };

int node_network_parse(const char *text, enum node_network *n, os_error *err)
{
	int i;

	if (parse_option_word("--node-network", text, network_names,
			      (int)(sizeof(network_names) / sizeof(network_names[0])), &i, err) < 0)
		return -1;
	*n = (enum node_network)i;
	return 0;
}

const char *node_network_name(enum node_network n)
{
	return n == NODE_NETWORK_UNSET ? "unset" : network_names[n];
}

enum node_network node_network_of_label(const char *value)
{
	return value && strcmp(value, network_names[NODE_NETWORK_WIREGUARD]) == 0 ? NODE_NETWORK_WIREGUARD
										    : NODE_NETWORK_VXLAN;
}

const char *node_network_backend(enum node_network n)
{
	return n == NODE_NETWORK_WIREGUARD ? "wireguard-native" : NULL;
}

/* flannel's defaults: its vxlan backend's port for both families (the
 * kernel's 8472), wireguard's one port a family (flannel
 * pkg/backend/wireguard: ListenPort 51820, ListenPortV6 51821). */
int node_network_port(enum node_network n, int ipv6)
{
	return n == NODE_NETWORK_VXLAN ? 8472 : ipv6 ? 51821 : 51820;
}
