/* Stand-alone `dsb-bench-solve`: the same program as `dsb bench solve`
 * (tools/dsb/cmd_bench_solve.c), linked only against the solver libraries so
 * scripts/gpu-check can build it without the rest of the dsb tool. */
int cmd_bench_solve(int argc, char **argv);

int main(int argc, char **argv) { return cmd_bench_solve(argc, argv); }
