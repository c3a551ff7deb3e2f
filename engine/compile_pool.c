/* A fixed set of threads taking compile jobs from a FIFO queue. Each
 * compile runs in its own child process, so the threads only wait. */
#include "compile_pool.h"
#include "core/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct compile_job {
	char *src;
	int done, ret;
	struct compile_result r;
	struct buf err;
	struct compile_job *next_q;           /* queue link */
	struct compile_job *prev_all, *next_all;  /* every job not yet waited for */
};

struct compile_pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct compile_job *head, *tail, *all;
	int stopping;
	int n_threads;
	pthread_t *threads;
	struct compile_opts opts;
};

static void *worker(void *arg)
{
	struct compile_pool *p = arg;
	for (;;) {
		struct compile_job *j;
		pthread_mutex_lock(&p->mu);
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->work, &p->mu);
		j = p->head;
		if (!j) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		p->head = j->next_q;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->mu);

		j->ret = compile_candidate(&p->opts, j->src, &j->r, &j->err);

		pthread_mutex_lock(&p->mu);
		j->done = 1;
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->mu);
	}
}

int compile_pool_open(struct compile_pool **pp, int n_threads, const struct compile_opts *opts,
		      struct buf *err)
{
	struct compile_pool *p = xcalloc(1, sizeof(*p));
	if (n_threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		n_threads = n > 0 ? (int)n : 1;
	}
	if (n_threads > 256)
		n_threads = 256;
	/* The fork-without-exec child is only safe from one thread. */
	if (!opts->kforge_exe)
		n_threads = 1;
	p->opts = *opts;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->threads = xcalloc((size_t)n_threads, sizeof(pthread_t));
	for (int i = 0; i < n_threads; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
			p->n_threads = i;
			compile_pool_close(p);
			*pp = NULL;
			return kf_err(err, "compile pool: cannot start thread %d", i);
		}
		p->n_threads = i + 1;
	}
	*pp = p;
	return 0;
}

struct compile_job *compile_pool_submit(struct compile_pool *p, const char *device_source)
{
	struct compile_job *j = xcalloc(1, sizeof(*j));

	j->src = xstrdup(device_source);
	compile_result_init(&j->r);
	buf_init(&j->err);
	pthread_mutex_lock(&p->mu);
	if (p->tail)
		p->tail->next_q = j;
	else
		p->head = j;
	p->tail = j;
	j->next_all = p->all;
	if (p->all)
		p->all->prev_all = j;
	p->all = j;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	return j;
}

static void job_free(struct compile_job *j)
{
	free(j->src);
	compile_result_release(&j->r);
	buf_release(&j->err);
	free(j);
}

int compile_pool_wait(struct compile_pool *p, struct compile_job *j, struct compile_result *r,
		      struct buf *err)
{
	int ret;
	pthread_mutex_lock(&p->mu);
	while (!j->done)
		pthread_cond_wait(&p->done, &p->mu);
	if (j->prev_all)
		j->prev_all->next_all = j->next_all;
	else
		p->all = j->next_all;
	if (j->next_all)
		j->next_all->prev_all = j->prev_all;
	pthread_mutex_unlock(&p->mu);

	ret = j->ret;
	compile_result_release(r);
	*r = j->r;
	compile_result_init(&j->r);
	if (ret < 0 && err)
		buf_setf(err, "%s", j->err.s);
	job_free(j);
	return ret;
}

int compile_pool_compile(struct compile_pool *p, const char *device_source,
			 struct compile_result *r, struct buf *err)
{
	return compile_pool_wait(p, compile_pool_submit(p, device_source), r, err);
}

int compile_pool_threads(const struct compile_pool *p)
{
	return p->n_threads;
}

void compile_pool_close(struct compile_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = 1;
	p->head = p->tail = NULL;   /* jobs not started are dropped (freed below) */
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	while (p->all) {
		struct compile_job *j = p->all;
		p->all = j->next_all;
		job_free(j);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->threads);
	free(p);
}
