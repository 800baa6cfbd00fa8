#include <stdio.h>

#include "commands.h"

int cmd_solve(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "dsb: not built yet\n");
    return 2;
}
