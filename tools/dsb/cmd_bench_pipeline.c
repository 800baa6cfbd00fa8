/* Placeholder until this command is built (see the issue list). */
#include <stdio.h>

#include "commands.h"

int cmd_bench_pipeline(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "dsb bench pipeline: not built yet\n");
    return 2;
}
