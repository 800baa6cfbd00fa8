/* dak: direct-access offloading for LLM inference (seed 003). */
#include "commands.h"
#include "common/args.h"

static const arg_command commands[] = {
    {"plan", cmd_plan, "per-operation offload plan for a model config, batch and length"},
    {"profile", cmd_profile, "measure host/HBM bandwidth and compute rates into a profile"},
    {"bench", cmd_bench, "benchmarks: gemm (direct-access split GEMM), attn (split attention), vs baselines"},
    {"decode", cmd_decode, "inference engine: greedy decoding, TPOT and EB over offload ratios vs prefetch"},
    {"ckpt", cmd_ckpt, "checkpoints (safetensors): check one against a model, write a synthetic one, time a read"},
    {"tokenize", cmd_tokenize, "text to token ids and back through a Hugging Face tokenizer.json"},
};

int main(int argc, char **argv)
{
    return arg_dispatch("dak", commands, (int)(sizeof commands / sizeof commands[0]), argc, argv);
}
