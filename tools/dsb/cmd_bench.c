/* `dsb bench cpu|solve|pipeline`: dispatch to the benchmark programs. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int cmd_bench(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } benches[] = {
        {"cpu", cmd_bench_cpu}, {"solve", cmd_bench_solve}, {"pipeline", cmd_bench_pipeline}};
    if (argc < 2) {
        fprintf(stderr, "usage: dsb bench cpu|solve|pipeline [options]\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        if (!strcmp(argv[1], benches[i].name)) return benches[i].run(argc - 1, argv + 1);
    fprintf(stderr, "dsb bench: unknown benchmark '%s' (expected cpu, solve or pipeline)\n",
            argv[1]);
    return 2;
}
