/* stderr into a temporary file and back (test_runtime.c, test_gpu_models.c:
 * the supervisor's warnings), still shown in the test's output. Include
 * after cmocka.h. */
#ifndef KF_TEST_STDERR_CAPTURE_H
#define KF_TEST_STDERR_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/buf.h"

struct capture {
	char path[32];
	int fd, saved;
};

static void capture_start(struct capture *c)
{
	snprintf(c->path, sizeof(c->path), "/tmp/kf-err-XXXXXX");
	c->fd = mkstemp(c->path);
	assert_true(c->fd >= 0);
	fflush(stderr);
	c->saved = dup(2);
	assert_true(c->saved >= 0 && dup2(c->fd, 2) == 2);
}

/* got: what was written meanwhile (replacing its contents). */
static void capture_end(struct capture *c, struct buf *got)
{
	struct buf err = BUF_INIT;

	fflush(stderr);
	assert_true(dup2(c->saved, 2) == 2);
	close(c->saved);
	close(c->fd);
	buf_reset(got);
	assert_int_equal(buf_read_file(got, c->path, 1 << 20, &err), 0);
	unlink(c->path);
	fputs(got->s, stderr);
	buf_release(&err);
}

#endif
