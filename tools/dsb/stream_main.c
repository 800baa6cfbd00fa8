/* Stand-alone `dsb-stream`: `dsb stream` (cmd_stream.c), or `dsb stream-send`
 * / `dsb stream-write` when called as `dsb-stream send|write ...`, linked only against the solver and
 * transport libraries so scripts/gpu-check-stream builds it without the rest of
 * the dsb tool. */
#include <string.h>

int cmd_stream(int argc, char **argv);
int cmd_stream_send(int argc, char **argv);
int cmd_stream_write(int argc, char **argv);

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "send")) return cmd_stream_send(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "write")) return cmd_stream_write(argc - 1, argv + 1);
    return cmd_stream(argc, argv);
}
