#include <stdio.h>

#include "commands.h"

int cmd_bench_cpu(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "dsb: not built yet\n");
    return 2;
}
