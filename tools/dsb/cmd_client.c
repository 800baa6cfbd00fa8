/* Placeholder until this command is built (see the issue list). */
#include <stdio.h>

#include "commands.h"

int cmd_client(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "dsb client: not built yet\n");
    return 2;
}
