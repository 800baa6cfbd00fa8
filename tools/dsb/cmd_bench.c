/* `dsb bench cpu|solve|pipeline`: dispatch to the benchmark programs. */
#include "commands.h"
#include "common/args.h"

int cmd_bench(int argc, char **argv)
{
    static const arg_command benches[] = {
        {"cpu", cmd_bench_cpu, "CPU reference throughput (couplings/s)"},
        {"solve", cmd_bench_solve, "one request per launch on the GPU (Table III)"},
        {"pipeline", cmd_bench_pipeline, "saturated persistent pipelines (Table IV)"},
    };
    return arg_dispatch("dsb bench", benches, (int)(sizeof benches / sizeof benches[0]), argc,
                        argv);
}
