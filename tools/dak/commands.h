/* Subcommands of the `dak` tool (seed 003): argc/argv start at the command's
 * own name; the return value is the exit status (0 ok, 1 failure, 2 usage). */
#ifndef DAK_TOOL_COMMANDS_H
#define DAK_TOOL_COMMANDS_H

int cmd_plan(int argc, char **argv);    /* offload planner (CPU) */
int cmd_profile(int argc, char **argv); /* machine profile for the planner (GPU) */
int cmd_bench(int argc, char **argv);   /* bench gemm | attn (GPU) */
int bench_attn(int argc, char **argv);  /* bench attn (bench_attn.c): the split attention for decoding */
int cmd_decode(int argc, char **argv);  /* inference engine: TPOT / EB over offload ratios (GPU) */
int cmd_ckpt(int argc, char **argv);    /* checkpoints: check, write a synthetic one, measure a read (CPU) */
int cmd_tokenize(int argc, char **argv); /* tokenizer.json: text to ids and back (CPU) */

#endif
