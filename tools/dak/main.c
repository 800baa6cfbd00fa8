/* dak: direct-access offloading for LLM inference (seed 003). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *help;
} commands[] = {
    {"plan", cmd_plan, "per-operation offload plan for a model config, batch and length"},
    {"profile", cmd_profile, "measure host/HBM bandwidth and compute rates into a profile"},
    {"bench", cmd_bench, "benchmarks: gemm (direct-access split GEMM vs baselines)"},
};

static void usage(FILE *o)
{
    fprintf(o, "usage: dak COMMAND [options]   (dak COMMAND --help for its options)\n\n");
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
    fprintf(stderr, "dak: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
