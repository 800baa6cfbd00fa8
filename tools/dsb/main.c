/* dsb: discrete simulated bifurcation solver and service (seed 000). */
#include "commands.h"
#include "common/args.h"

static const arg_command commands[] = {
    {"solve", cmd_solve, "solve one instance (file or generator) on the cpu or gpu backend"},
    {"bench", cmd_bench, "benchmarks: cpu | solve (Table III) | pipeline (Table IV)"},
    {"serve", cmd_serve, "serve SOLVE requests over UDP or raw frames"},
    {"client", cmd_client, "load-generating client: upload a model, closed or open loop"},
    {"stream", cmd_stream, "streaming solver: dense one-bit couplings as frames, n up to 1.6e7"},
    {"stream-send", cmd_stream_send, "the streaming solver's frame generator (udp or raw frames)"},
    {"stream-write", cmd_stream_write, "write a matrix as a stream file (dsb stream --file)"},
};

int main(int argc, char **argv)
{
    return arg_dispatch("dsb", commands, (int)(sizeof commands / sizeof commands[0]), argc, argv);
}
