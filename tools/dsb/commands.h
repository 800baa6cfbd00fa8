/* Subcommands of the `dsb` tool: each takes argc/argv starting at its own
 * name and returns the process exit status (0 ok, 1 failure, 2 bad usage). */
#ifndef DSB_TOOL_COMMANDS_H
#define DSB_TOOL_COMMANDS_H

int cmd_solve(int argc, char **argv);
int cmd_bench(int argc, char **argv);  /* dispatches: bench cpu | solve | pipeline */
int cmd_serve(int argc, char **argv);
int cmd_client(int argc, char **argv);
int cmd_stream(int argc, char **argv);      /* Sec. VIII */
int cmd_stream_send(int argc, char **argv); /* its generator */
int cmd_stream_write(int argc, char **argv);
/* The flags naming the streamed matrix, shared by the three (--n, --instance,
 * --seed, --file, --run-id): stream_matrix_flag returns 1 handled, 0 not one of them,
 * -1 bad value (message printed); stream_matrix_finish, after the flags,
 * opens the file (0, 1 a bad file, 2 --file with --n or --instance). */
#include "dsb/stream.h"
typedef struct {
    dsb_stream_params *p;
    const char *file;
    int n_set, instance_set;
    uint32_t run_id; /* --run-id (a receiver of a file's frames) */
    int run_id_set;
} stream_matrix;
int stream_matrix_flag(const char *prog, const char *a, const char *v, stream_matrix *m);
int stream_matrix_finish(const char *prog, stream_matrix *m);

/* bench subcommands, each in its own file */
int cmd_bench_cpu(int argc, char **argv);
int cmd_bench_solve(int argc, char **argv);    /* Table III, GPU */
int cmd_bench_pipeline(int argc, char **argv); /* Table IV, GPU */

/* The transport flags of `dsb serve` (client = 0: --bind, --port may be 0)
 * and `dsb client` (client = 1: --server, --server-mac): 1 handled, 0 not a
 * transport flag, -1 bad value (message printed). */
#include "dsb/transport.h"
int transport_flag(const char *P, const char *a, const char *v, dsb_transport_config *tc,
                   int client);

#endif
