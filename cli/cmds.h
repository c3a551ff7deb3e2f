/* Command entry points; each lives in cli/cmd_NAME.c with its option table. */
#ifndef KF_CMDS_H
#define KF_CMDS_H

#include "cli.h"

int cmd_problems(int argc, char **argv, struct cli_ctx *ctx);
/* cmd_problems_sens.c: `kforge problems sensitivity` */
int problems_sensitivity(int argc, char **argv, struct cli_ctx *ctx);
int cmd_baselines(int argc, char **argv, struct cli_ctx *ctx);
int cmd_eval(int argc, char **argv, struct cli_ctx *ctx);
int cmd_search(int argc, char **argv, struct cli_ctx *ctx);
int cmd_verify(int argc, char **argv, struct cli_ctx *ctx);
int cmd_merge(int argc, char **argv, struct cli_ctx *ctx);
int cmd_pack(int argc, char **argv, struct cli_ctx *ctx);
int cmd_dataset(int argc, char **argv, struct cli_ctx *ctx);
int cmd_site(int argc, char **argv, struct cli_ctx *ctx);
int cmd_report(int argc, char **argv, struct cli_ctx *ctx);
int cmd_catalogue(int argc, char **argv, struct cli_ctx *ctx);
int cmd_template(int argc, char **argv, struct cli_ctx *ctx);
int cmd_slurm(int argc, char **argv, struct cli_ctx *ctx);
int cmd_store(int argc, char **argv, struct cli_ctx *ctx);
int cmd_gpu_info(int argc, char **argv, struct cli_ctx *ctx);
int cmd_worker(int argc, char **argv, struct cli_ctx *ctx);
int cmd_compile_child(int argc, char **argv, struct cli_ctx *ctx);

#endif
