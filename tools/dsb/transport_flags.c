/* The transport flags shared by `dsb serve` and `dsb client`. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"

int transport_flag(const char *P, const char *a, const char *v, dsb_transport_config *tc,
                   int client)
{
    uint32_t u;
    if (arg_is(a, "--transport")) {
        if (strcmp(v, "udp") && strcmp(v, "packet")) {
            fprintf(stderr, "%s: --transport: expected udp or packet, got '%s'\n", P, v);
            return -1;
        }
        tc->kind = v;
    } else if (arg_is(a, "--port")) {
        /* a server may take port 0 (the kernel picks one); a client needs a real one */
        if (arg_u32(P, "--port", v, client ? 1u : 0u, 65535, &u)) return -1;
        if (client)
            tc->peer_port = (uint16_t)u;
        else
            tc->bind_port = (uint16_t)u;
    } else if (arg_is(a, "--iface")) {
        tc->ifname = v;
    } else if (!client && arg_is(a, "--bind")) {
        tc->bind_addr = v;
    } else if (client && arg_is(a, "--server")) {
        tc->peer_addr = v;
    } else if (arg_is(a, "--mac") || (client && arg_is(a, "--server-mac"))) {
        uint8_t mac[6];
        if (dsb_parse_mac(v, mac)) {
            fprintf(stderr, "%s: %s: expected aa:bb:cc:dd:ee:ff, got '%s'\n", P, a, v);
            return -1;
        }
        if (arg_is(a, "--mac"))
            tc->mac = v;
        else
            tc->peer_mac = v;
    } else {
        return 0;
    }
    return 1;
}
