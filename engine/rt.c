#include "rt.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/proc.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

void rt_msg_init(struct rt_msg *m)
{
	m->type = 0;
	m->json = NULL;
	buf_init(&m->bin);
}

void rt_msg_release(struct rt_msg *m)
{
	json_decref(m->json);
	m->json = NULL;
	buf_release(&m->bin);
}

static int write_all(int fd, const void *p, size_t n, struct buf *err)
{
	if (write_all_fd(fd, p, n) < 0)
		return kf_err(err, "worker pipe: %s", errno ? strerror(errno) : "closed");
	return 0;
}

int rt_send(int fd, int type, const json_t *j, const void *bin, size_t bin_len, struct buf *err)
{
	struct buf b = BUF_INIT;
	uint32_t h[4];
	int r;

	if (j)
		json_add_compact(&b, j);
	else
		buf_adds(&b, "{}");
	if (b.len > RT_JSON_MAX || bin_len > RT_BIN_MAX) {
		buf_release(&b);
		return kf_err(err, "worker message too large");
	}
	h[0] = RT_MAGIC;
	h[1] = (uint32_t)type;
	h[2] = (uint32_t)b.len;
	h[3] = (uint32_t)bin_len;
	r = write_all(fd, h, sizeof(h), err);
	if (!r)
		r = write_all(fd, b.s, b.len, err);
	if (!r && bin_len)
		r = write_all(fd, bin, bin_len, err);
	buf_release(&b);
	return r;
}

/* 0, -1 error/EOF, -2 deadline */
static int read_all(int fd, void *p, size_t n, double deadline, struct buf *err)
{
	char *c = p;

	while (n) {
		ssize_t r;
		if (deadline > 0) {
			struct pollfd pf = { fd, POLLIN, 0 };
			double left = deadline - now_s();
			int pr;
			if (left <= 0)
				return -2;
			pr = poll(&pf, 1, (int)(left * 1000) + 1);
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr < 0)
				return kf_err(err, "poll: %s", strerror(errno));
			if (pr == 0)
				continue;
		}
		r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return kf_err(err, "worker pipe: %s", strerror(errno));
		if (r == 0)
			return kf_err(err, "worker pipe closed");
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int rt_recv(int fd, struct rt_msg *m, double deadline, struct buf *err)
{
	uint32_t h[4];
	struct buf js = BUF_INIT;
	int r;

	rt_msg_release(m);
	r = read_all(fd, h, sizeof(h), deadline, err);
	if (r)
		return r;
	if (h[0] != RT_MAGIC || h[2] > RT_JSON_MAX || h[3] > RT_BIN_MAX)
		return kf_err(err, "worker protocol error (bad frame header)");
	buf_grow(&js, h[2]);
	r = read_all(fd, js.s, h[2], deadline, err);
	if (r) {
		buf_release(&js);
		return r;
	}
	js.len = h[2];
	js.s[js.len] = '\0';
	buf_grow(&m->bin, h[3]);
	r = h[3] ? read_all(fd, m->bin.s, h[3], deadline, err) : 0;
	if (r) {
		buf_release(&js);
		return r;
	}
	m->bin.len = h[3];
	if (m->bin.alloc)
		m->bin.s[m->bin.len] = '\0';
	m->json = json_parse_bounded(js.s, js.len, RT_JSON_MAX, err);
	buf_release(&js);
	if (!m->json || !json_is_object(m->json))
		return kf_err(err, "worker protocol error (bad JSON)");
	m->type = (int)h[1];
	return 0;
}
