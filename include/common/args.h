/* Command-line value parsing for every tool: each function checks the whole
 * string and the range, and on failure prints
 *   "<prog>: <flag>: expected <what>, got '<value>'"
 * to stderr and returns -1 (the caller exits with status 2). */
#ifndef COMMON_ARGS_H
#define COMMON_ARGS_H

#include <stdint.h>

/* Integer in [lo, hi]; accepts decimal, 0x hex and a k/M/G suffix (x1000^i)
 * or scientific notation that is an exact integer ("1e7"). */
int arg_u64(const char *prog, const char *flag, const char *value, uint64_t lo, uint64_t hi,
            uint64_t *out);
int arg_u32(const char *prog, const char *flag, const char *value, uint32_t lo, uint32_t hi,
            uint32_t *out);
/* The word `word` (*out = word_value) or an integer in [lo, hi] as arg_u32 reads it ("--pdl-pre none|N"). */
int arg_u32_or_word(const char *prog, const char *flag, const char *value, uint32_t lo, uint32_t hi,
                    const char *word, uint32_t word_value, uint32_t *out);
/* Finite double in [lo, hi]. */
int arg_f64(const char *prog, const char *flag, const char *value, double lo, double hi,
            double *out);
/* Byte size with optional K/M/G/T or KiB/MiB/GiB/TiB suffix (powers of 1024,
 * or 1000 for KB/MB/GB/TB). */
int arg_bytes(const char *prog, const char *flag, const char *value, uint64_t *out);

/* Fetches the value of flag argv[*i] ("--flag value" or "--flag=value").
 * Returns NULL (after a message) when the value is missing. */
const char *arg_value(const char *prog, int argc, char **argv, int *i);
/* True when argv[i] is `flag` or starts with `flag=`. */
int arg_is(const char *arg, const char *flag);

/* A tool's subcommands: `prog NAME [options]` runs NAME's run(argc - 1,
 * argv + 1).  No NAME: usage on stderr, 2; --help / -h / help: usage on
 * stdout, 0; an unknown NAME: "<prog>: unknown command 'X'" and usage on
 * stderr, 2. */
typedef struct {
    const char *name;
    int (*run)(int, char **);
    const char *help;
} arg_command;
int arg_dispatch(const char *prog, const arg_command *cmds, int ncmds, int argc, char **argv);

#endif
