/* Subcommands of the `dsb` tool: each takes argc/argv starting at its own
 * name and returns the process exit status (0 ok, 1 failure, 2 bad usage). */
#ifndef DSB_TOOL_COMMANDS_H
#define DSB_TOOL_COMMANDS_H

int cmd_solve(int argc, char **argv);
int cmd_bench(int argc, char **argv);  /* dispatches: bench cpu | solve | pipeline */
int cmd_serve(int argc, char **argv);
int cmd_client(int argc, char **argv);

/* bench subcommands, each in its own file */
int cmd_bench_cpu(int argc, char **argv);
int cmd_bench_solve(int argc, char **argv);    /* Table III, GPU */
int cmd_bench_pipeline(int argc, char **argv); /* Table IV, GPU */

#endif
