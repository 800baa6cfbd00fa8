/* Stand-alone `dsb-stream`: the same program as `dsb stream` (cmd_stream.c),
 * linked only against the solver libraries so scripts/gpu-check-stream can
 * build it without the rest of the dsb tool. */
int cmd_stream(int argc, char **argv);

int main(int argc, char **argv) { return cmd_stream(argc, argv); }
