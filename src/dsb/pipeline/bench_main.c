/* Stand-alone entry point of `dsb bench pipeline` (the same code as the
 * subcommand of the dsb tool). */
#include "commands.h"

int main(int argc, char **argv) { return cmd_bench_pipeline(argc, argv); }
