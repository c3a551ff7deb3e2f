/* A stand-in GPU worker for the supervisor's tests (no GPU): speaks the
 * protocol of engine/rt.h on fds 3/4 and misbehaves on request. EVAL's
 * "mode": ok | pid | crash | hang_after_progress | fatal | slow_progress |
 * wait_file (until "file" exists, announcing itself) | printf (writes to
 * stdout). With "log", each request first appends its "problem_dir" and a
 * newline to that file. FAKE_WORKER_DEAD_DEVICE=N|all: the worker of
 * --device N (or any) exits (status 3) before answering hello, a GPU that
 * cannot start; with FAKE_WORKER_DEAD_IF=path, only while that file exists.
 * FAKE_WORKER_NAMES="Model A,Model B,...": the model the worker of
 * --device i names in its hello is the i-th (default "Fake GPU"); the
 * replies of "ok", "pid" and "wait_file" say the worker's pid, device and
 * model too, "ok" and "pid" a timed trial of 1 ms. PEAKS gets fixed figures
 * (the engine measures them at open). KFORGE_WORKER_EXE makes kforge run it
 * (engine/supervisor.c): CLI tests of a host with several GPU models.
 * FAKE_WORKER_CRASH_DEVICE=N: the worker of --device N aborts on every
 * EVAL, whatever its mode (a bad GPU). */
#include "core/json.h"
#include "engine/rt.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The i-th name of FAKE_WORKER_NAMES, else "Fake GPU". */
static void model_of(int device, char *name, size_t cap)
{
	const char *p = getenv("FAKE_WORKER_NAMES");

	snprintf(name, cap, "Fake GPU");
	for (int i = 0; p && *p; i++) {
		size_t len = strcspn(p, ",");
		if (i == device) {
			snprintf(name, cap, "%.*s", (int)len, p);
			return;
		}
		p += len + (p[len] == ',');
	}
}

int main(int argc, char **argv)
{
	struct rt_msg m;
	struct buf err = BUF_INIT;
	char name[128];
	int device;

	if (argc < 2 || strcmp(argv[1], "__worker"))
		return 2;
	device = argc >= 4 && !strcmp(argv[2], "--device") ? atoi(argv[3]) : 0;
	model_of(device, name, sizeof(name));
	if (getenv("FAKE_WORKER_DEAD_DEVICE") && argc >= 4 && !strcmp(argv[2], "--device") &&
	    (!strcmp(argv[3], getenv("FAKE_WORKER_DEAD_DEVICE")) ||
	     !strcmp("all", getenv("FAKE_WORKER_DEAD_DEVICE"))) &&
	    (!getenv("FAKE_WORKER_DEAD_IF") || access(getenv("FAKE_WORKER_DEAD_IF"), F_OK) == 0))
		return 3;
	rt_msg_init(&m);
	for (;;) {
		const char *mode;
		json_t *r = NULL;
		if (rt_recv(3, &m, 0, &err) < 0 || m.type == RT_QUIT) {
			rt_msg_release(&m);
			buf_release(&err);
			return 0;
		}
		if (m.type == RT_HELLO) {
			r = json_pack("{s:b,s:s,s:s,s:i,s:i}", "ok", 1, "name", name, "arch", "sm_90",
				      "pid", (int)getpid(), "device", device);
			rt_send(4, RT_INFO, r, "CUBIN", 5, &err);
			json_decref(r);
			continue;
		}
		if (m.type == RT_PEAKS) {
			r = json_pack("{s:f,s:f}", "gbs", 1000.0, "gflops", 10000.0);
			rt_send(4, RT_RESULT, r, NULL, 0, &err);
			json_decref(r);
			continue;
		}
		mode = jget_str(m.json, "mode", "ok");
		if (*jget_str(m.json, "log", "")) {
			/* the order requests reach the worker: the supervisor's grants */
			FILE *f = fopen(jget_str(m.json, "log", ""), "a");
			if (f) {
				fprintf(f, "%s\n", jget_str(m.json, "problem_dir", ""));
				fclose(f);
			}
		}
		if (!strcmp(mode, "crash") || (getenv("FAKE_WORKER_CRASH_DEVICE") &&
		    atoi(getenv("FAKE_WORKER_CRASH_DEVICE")) == device)) {
			abort();   /* a candidate's crash, or a bad GPU's (every request) */
		} else if (!strcmp(mode, "hang_after_progress")) {
			json_t *p = json_pack("{s:f}", "next_s", jget_num(m.json, "next_s", 0.5));
			rt_send(4, RT_PROGRESS, p, NULL, 0, &err);
			json_decref(p);
			for (;;)
				pause();
		} else if (!strcmp(mode, "slow_progress")) {
			/* Silent for longer than the first deadline would allow, but
			 * always within what it announced. */
			for (int i = 0; i < 4; i++) {
				json_t *p = json_pack("{s:f}", "next_s", 0.5);
				rt_send(4, RT_PROGRESS, p, NULL, 0, &err);
				json_decref(p);
				usleep(400000);
			}
			r = json_pack("{s:s}", "status", "correct");
		} else if (!strcmp(mode, "wait_file")) {
			const char *f = jget_str(m.json, "file", "");
			for (int i = 0; i < 1000 && access(f, F_OK) != 0; i++) {
				json_t *p = json_pack("{s:f}", "next_s", 0.5);
				rt_send(4, RT_PROGRESS, p, NULL, 0, &err);
				json_decref(p);
				usleep(10000);
			}
			r = json_pack("{s:s,s:i,s:i,s:s}", "status", "correct", "pid", (int)getpid(),
				      "device", device, "name", name);
		} else if (!strcmp(mode, "printf")) {
			/* What a kernel's device printf does when the driver flushes it. */
			static const char msg[] = "device printf from the candidate\n";
			if (write(1, msg, sizeof(msg) - 1) < 0)
				r = json_pack("{s:s}", "status", "runtime_error");
			else
				r = json_pack("{s:s}", "status", "correct");
		} else if (!strcmp(mode, "fatal")) {
			r = json_pack("{s:s,s:b}", "status", "runtime_error", "fatal", 1);
			rt_send(4, RT_RESULT, r, NULL, 0, &err);
			_exit(0);
		} else {
			/* one timed trial, so the engine records a time (verify selects by it) */
			r = json_pack("{s:s,s:i,s:I,s:i,s:s,s:[{s:f}]}", "status", "correct", "pid",
				      (int)getpid(), "bin", (json_int_t)m.bin.len, "device", device,
				      "name", name, "time", "time_ms", 1.0);
		}
		rt_send(4, RT_RESULT, r, NULL, 0, &err);
		json_decref(r);
	}
}
