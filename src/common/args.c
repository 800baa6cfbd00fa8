#include "common/args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *prog, const char *flag, const char *what, const char *value)
{
    fprintf(stderr, "%s: %s: expected %s, got '%s'\n", prog, flag, what, value ? value : "");
    return -1;
}

int arg_is(const char *arg, const char *flag)
{
    size_t n = strlen(flag);
    return strncmp(arg, flag, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

const char *arg_value(const char *prog, int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq && strncmp(argv[*i], "--", 2) == 0) return eq + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s: expected a value after the flag, got nothing\n", prog,
                argv[*i]);
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

int arg_u64(const char *prog, const char *flag, const char *value, uint64_t lo, uint64_t hi,
            uint64_t *out)
{
    char what[128];
    snprintf(what, sizeof what, "an integer in [%llu, %llu]", (unsigned long long)lo,
             (unsigned long long)hi);
    if (!value || !*value || value[0] == '-' || value[0] == '+') return bad(prog, flag, what, value);
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(value, &end, 0);
    if (errno == 0 && end != value && (*end == 'e' || *end == 'E' || *end == '.')) {
        /* scientific or decimal notation, e.g. 1e7: accept when exact */
        char *end2 = NULL;
        double d = strtod(value, &end2);
        if (*end2 != '\0' || !isfinite(d) || d < 0 || d > 1.8e19 || d != floor(d))
            return bad(prog, flag, what, value);
        v = (unsigned long long)d;
        end = end2;
    } else if (errno == 0 && end != value && *end) {
        unsigned long long mult = 0;
        if (!strcmp(end, "k") || !strcmp(end, "K")) mult = 1000ull;
        else if (!strcmp(end, "M")) mult = 1000000ull;
        else if (!strcmp(end, "G")) mult = 1000000000ull;
        if (!mult || v > UINT64_MAX / mult) return bad(prog, flag, what, value);
        v *= mult;
        end += strlen(end);
    }
    if (errno || end == value || *end || v < lo || v > hi) return bad(prog, flag, what, value);
    *out = v;
    return 0;
}

int arg_u32(const char *prog, const char *flag, const char *value, uint32_t lo, uint32_t hi,
            uint32_t *out)
{
    uint64_t v;
    if (arg_u64(prog, flag, value, lo, hi, &v)) return -1;
    *out = (uint32_t)v;
    return 0;
}

int arg_u32_or_word(const char *prog, const char *flag, const char *value, uint32_t lo, uint32_t hi,
                    const char *word, uint32_t word_value, uint32_t *out)
{
    if (value && !strcmp(value, word)) {
        *out = word_value;
        return 0;
    }
    char what[128];
    snprintf(what, sizeof what, "'%s' or an integer in [%u, %u]", word, lo, hi);
    if (!value || !*value || value[0] == '-' || value[0] == '+') return bad(prog, flag, what, value);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (errno || end == value || *end || v < lo || v > hi) return bad(prog, flag, what, value);
    *out = (uint32_t)v;
    return 0;
}

int arg_f64(const char *prog, const char *flag, const char *value, double lo, double hi,
            double *out)
{
    char what[128];
    snprintf(what, sizeof what, "a number in [%g, %g]", lo, hi);
    if (!value || !*value) return bad(prog, flag, what, value);
    errno = 0;
    char *end = NULL;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !isfinite(v) || v < lo || v > hi)
        return bad(prog, flag, what, value);
    *out = v;
    return 0;
}

int arg_bytes(const char *prog, const char *flag, const char *value, uint64_t *out)
{
    const char *what = "a size such as 40GiB, 512MiB, 4096 or 1.5GB";
    if (!value || !*value || value[0] == '-') return bad(prog, flag, what, value);
    errno = 0;
    char *end = NULL;
    double v = strtod(value, &end);
    if (errno || end == value || !isfinite(v) || v < 0) return bad(prog, flag, what, value);
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {{"", 1},          {"B", 1},          {"K", 1024.0},     {"KiB", 1024.0},
                 {"M", 1048576.0}, {"MiB", 1048576.0}, {"G", 1073741824.0}, {"GiB", 1073741824.0},
                 {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6},
                 {"GB", 1e9},      {"TB", 1e12}};
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        if (strcmp(end, units[u].suffix) == 0) {
            double b = v * units[u].mult;
            if (b > 1.8e19 || b != floor(b)) return bad(prog, flag, what, value);
            *out = (uint64_t)b;
            return 0;
        }
    }
    return bad(prog, flag, what, value);
}

static void dispatch_usage(FILE *o, const char *prog, const arg_command *cmds, int n)
{
    fprintf(o, "usage: %s COMMAND [options]   (%s COMMAND --help for its options)\n\n", prog, prog);
    for (int i = 0; i < n; i++) fprintf(o, "  %-8s %s\n", cmds[i].name, cmds[i].help);
}

int arg_dispatch(const char *prog, const arg_command *cmds, int ncmds, int argc, char **argv)
{
    if (argc < 2) {
        dispatch_usage(stderr, prog, cmds, ncmds);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        dispatch_usage(stdout, prog, cmds, ncmds);
        return 0;
    }
    for (int i = 0; i < ncmds; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
    dispatch_usage(stderr, prog, cmds, ncmds);
    return 2;
}
