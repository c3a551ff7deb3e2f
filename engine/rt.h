/* The wire protocol between the engine's supervisor and its GPU workers
 * (`kforge __worker`), over a pair of pipes. A frame is a 16-byte header
 * {magic, type, json_len, bin_len} (little-endian u32), a JSON object,
 * then a binary attachment (cubins). Both sides bound the sizes.
 *
 *   supervisor → worker            worker → supervisor
 *   RT_HELLO {harness?} +cubin     RT_INFO {device description} (+harness cubin)
 *   RT_EVAL {...} +ref|cand cubins RT_PROGRESS {"next_s"}* then RT_RESULT {...}
 *   RT_SAMPLE {...} +ref cubin     RT_PROGRESS* then RT_RESULT {values, time_ms}
 *   RT_PEAKS {}                    RT_RESULT {gbs, gflops}
 *   RT_QUIT                        (exits)
 *
 * RT_PROGRESS announces how long the worker may stay silent before its
 * next frame ("next_s"); the supervisor kills a worker that overstays it
 * by 2 s. A RESULT with "fatal": true means the worker exits after it
 * (its context is unusable); the supervisor starts a new one. */
#ifndef KF_RT_H
#define KF_RT_H

#include <stddef.h>
#include <jansson.h>
#include "core/buf.h"

/* 3: module globals restored before every launch block, fresh timed inputs,
 * floors per precision path (issue 37): results of 2 are keyed apart. */
#define RT_PROTOCOL_VERSION 3
#define RT_MAGIC 0x7472666bu      /* "kfrt" */
#define RT_JSON_MAX (16u << 20)
#define RT_BIN_MAX (512u << 20)

enum rt_type {
	RT_HELLO = 1, RT_INFO, RT_EVAL, RT_RESULT, RT_PROGRESS, RT_SAMPLE, RT_PEAKS, RT_QUIT,
};

struct rt_msg {
	int type;
	json_t *json;          /* owned, never NULL after a successful recv */
	struct buf bin;
};

void rt_msg_init(struct rt_msg *m);
void rt_msg_release(struct rt_msg *m);

/* Writes one frame (handles short writes, EINTR). 0 or -1 with err. */
int rt_send(int fd, int type, const json_t *j, const void *bin, size_t bin_len, struct buf *err);
/* Reads one frame. deadline: monotonic seconds (now_s()), 0 = wait forever.
 * 0 ok; -1 error or EOF (err says which); -2 deadline passed. */
int rt_recv(int fd, struct rt_msg *m, double deadline, struct buf *err);

#endif
