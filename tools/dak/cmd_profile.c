/* Placeholder until this command is built (see the issue list). */
#include <stdio.h>

#include "commands.h"

int cmd_profile(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "dak profile: not built yet\n");
    return 2;
}
