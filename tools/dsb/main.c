/* dsb: discrete simulated bifurcation solver and service (seed 000). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *help;
} commands[] = {
    {"solve", cmd_solve, "solve one instance (file or generator) on the cpu or gpu backend"},
    {"bench", cmd_bench, "benchmarks: cpu | solve (Table III) | pipeline (Table IV)"},
    {"serve", cmd_serve, "serve SOLVE requests over UDP or raw frames"},
    {"client", cmd_client, "load-generating client: upload a model, closed or open loop"},
};

static void usage(FILE *o)
{
    fprintf(o, "usage: dsb COMMAND [options]   (dsb COMMAND --help for its options)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(o, "  %-8s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "dsb: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
