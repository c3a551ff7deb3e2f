/* Command entry points; each lives in cli/cmd_NAME.c with its usage text. */
#ifndef KF_CMDS_H
#define KF_CMDS_H

#include "cli.h"

int cmd_problems(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_problems[];
int cmd_baselines(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_baselines[];
int cmd_eval(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_eval[];
int cmd_search(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_search[];
int cmd_verify(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_verify[];
int cmd_merge(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_merge[];
int cmd_pack(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_pack[];
int cmd_dataset(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_dataset[];
int cmd_site(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_site[];
int cmd_report(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_report[];
int cmd_catalogue(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_catalogue[];
int cmd_template(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_template[];
int cmd_slurm(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_slurm[];
int cmd_store(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_store[];
int cmd_gpu_info(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_gpu_info[];
int cmd_worker(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_worker[];
int cmd_compile_child(int argc, char **argv, struct cli_ctx *ctx);
extern const char usage_compile_child[];

#endif
