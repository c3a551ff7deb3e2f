/* The parent side of the sandboxed compile: builds the request, runs the
 * child under limits, reads its reply, parses ptxas statistics. */
#include "compile.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <elf.h>
#include <string.h>
#include "candidate.h"
#include "compile_int.h"
#include "core/json.h"
#include "core/proc.h"
#include "nvrtc.h"
#include "core/xalloc.h"

void compile_opts_default(struct compile_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->arch = "sm_90";
	o->timeout_s = 30;
	o->cpu_s = 30;
	o->as_bytes = (size_t)8 << 30;
}

void compile_result_init(struct compile_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->message);
	buf_init(&r->log);
	buf_init(&r->cubin);
	buf_init(&r->options);
}

static void free_kernels(struct compile_result *r)
{
	for (int i = 0; i < r->n_kernels; i++)
		free(r->kernels[i].name);
	free(r->kernels);
	r->kernels = NULL;
	r->n_kernels = 0;
}

void compile_result_release(struct compile_result *r)
{
	buf_release(&r->message);
	buf_release(&r->log);
	buf_release(&r->cubin);
	buf_release(&r->options);
	free_kernels(r);
	compile_result_init(r);
}

static int valid_arch(const char *a)
{
	if (strncmp(a, "sm_", 3) && strncmp(a, "compute_", 8))
		return 0;
	a = strchr(a, '_') + 1;
	if (!*a || strlen(a) > 6)
		return 0;
	for (; *a; a++)
		if (!((*a >= '0' && *a <= '9') || *a == 'a' || *a == 'f'))
			return 0;
	return 1;
}

static void add_opt(struct buf *req, struct buf *json, int *n, const char *opt, int record)
{
	buf_adds(req, opt);
	buf_addc(req, '\n');
	(*n)++;
	if (record) {
		if (json->len > 1)
			buf_addc(json, ',');
		json_add_string(json, opt, strlen(opt));
	}
}

/* Request: "KFC1 N_OPTS SRC_LEN\n", one option per line, the source. */
static int build_request(const struct compile_opts *o, const char *src, struct buf *req,
			 struct buf *options, struct buf *err)
{
	struct buf opts = BUF_INIT, inc = BUF_INIT, tmp = BUF_INIT;
	const char *arch = o->arch && *o->arch ? o->arch : "sm_90";
	int n = 0;

	if (!valid_arch(arch))
		return kf_err(err, "bad GPU architecture `%s` (expected sm_NN)", arch);
	buf_setf(options, "[");
	buf_setf(&tmp, "--gpu-architecture=%s", arch);
	add_opt(&opts, options, &n, tmp.s, 1);
	add_opt(&opts, options, &n, "-std=c++17", 1);
	add_opt(&opts, options, &n, "-lineinfo", 1);
	add_opt(&opts, options, &n, "--ptxas-options=-v", 1);
	if (o->fast_math)
		add_opt(&opts, options, &n, "--use_fast_math", 1);
	/* The toolkit's own headers, only now that the allow-list scan passed. */
	if (nvrtc_include_dir(&inc) == 0) {
		buf_setf(&tmp, "-I%s", inc.s);
		add_opt(&opts, options, &n, tmp.s, 0);
		buf_setf(&tmp, "-I%s/cccl", inc.s);
		add_opt(&opts, options, &n, tmp.s, 0);
	}
	buf_addc(options, ']');
	buf_setf(req, "KFC1 %d %zu\n", n, strlen(src));
	buf_add(req, opts.s, opts.len);
	buf_adds(req, src);
	buf_release(&opts);
	buf_release(&inc);
	buf_release(&tmp);
	return 0;
}

/* Reply: "KFR1 OK MAJOR MINOR LOG_LEN CUBIN_LEN\n" LOG CUBIN. */
static int read_reply(const struct buf *out, struct compile_result *r, struct buf *err)
{
	int ok, major, minor, used = 0;
	size_t log_len, cubin_len;
	const char *nl = memchr(out->s, '\n', out->len < 128 ? out->len : 128);

	if (!nl || sscanf(out->s, "KFR1 %d %d %d %zu %zu%n", &ok, &major, &minor, &log_len,
			  &cubin_len, &used) != 5 || out->s + used != nl)
		return kf_err(err, "compile child: malformed reply");
	if (log_len > COMPILE_LOG_MAX + 64 || cubin_len > COMPILE_CUBIN_MAX ||
	    (size_t)(out->s + out->len - (nl + 1)) != log_len + cubin_len)
		return kf_err(err, "compile child: reply sizes do not add up");
	r->ok = ok == 1 && cubin_len > 0;
	snprintf(r->nvrtc_version, sizeof(r->nvrtc_version), "%d.%d", major, minor);
	buf_reset(&r->log);
	buf_add(&r->log, nl + 1, log_len);
	buf_reset(&r->cubin);
	buf_add(&r->cubin, nl + 1 + log_len, cubin_len);
	return 0;
}

static int child_fn(void *arg)
{
	(void)arg;
	return compile_child_main(0, 1);
}

int compile_candidate(const struct compile_opts *o, const char *src, struct compile_result *r,
		      struct buf *err)
{
	struct buf req = BUF_INIT, desc = BUF_INIT;
	struct proc_result pr;
	struct proc_limits lim = { 0 };
	double t0 = now_s();
	int ret = -1;

	proc_result_init(&pr);
	compile_result_release(r);
	if (build_request(o, src, &req, &r->options, err) < 0)
		goto out;
	lim.wall_s = o->timeout_s > 0 ? o->timeout_s : 30;
	lim.cpu_s = o->cpu_s > 0 ? o->cpu_s : 30;
	lim.as_bytes = o->as_bytes;
#if defined(__SANITIZE_ADDRESS__)
	lim.as_bytes = 0;   /* ASan reserves terabytes of shadow address space */
#endif
	lim.fsize_bytes = 1 << 20;   /* NVRTC writes no files; a little room for its temp use */
	lim.max_output = COMPILE_CUBIN_MAX + COMPILE_LOG_MAX + 4096;
	{
		/* A child that dies before reading its request must not kill this
		 * process with SIGPIPE: block it in this thread (write's SIGPIPE is
		 * thread-directed) and drop a pending one afterwards. */
		sigset_t pipe_set, old;
		const struct timespec zero = { 0, 0 };
		int started;
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
		if (o->kforge_exe) {
			const char *argv[] = { o->kforge_exe, "__compile", NULL };
			started = proc_run(argv, req.s, req.len, &lim, &pr, err);
		} else {
			started = proc_run_fn(child_fn, NULL, req.s, req.len, &lim, &pr, err);
		}
		if (!sigismember(&old, SIGPIPE))
			while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
				;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (started < 0)
			goto out;
	}
	r->ms = (now_s() - t0) * 1e3;
	/* RLIMIT_CPU soft == hard: SIGXCPU is the CPU limit; a SIGKILL is
	 * someone else (the OOM killer), reported as a failed compile below. */
	if (pr.timed_out || (pr.signaled && pr.status == SIGXCPU)) {
		r->timed_out = 1;
		if (pr.timed_out)
			buf_setf(&r->message, "compile timed out after %.0f s (wall limit)", lim.wall_s);
		else
			buf_setf(&r->message, "compile hit the CPU-time limit (%ld s)", lim.cpu_s);
		ret = 0;
		goto out;
	}
	/* Killed by a stop request (the job's SIGTERM reaches the whole process
	 * group): no verdict on the candidate, nothing recorded; a resumed run
	 * compiles it again. */
	if (pr.signaled && (pr.status == SIGTERM || pr.status == SIGINT || pr.status == SIGHUP ||
			    pr.status == SIGQUIT)) {
		proc_describe(&pr, &desc);
		kf_err(err, "compile interrupted (%s)", desc.s);
		goto out;
	}
	if (pr.signaled || (pr.exited && pr.status == CHILD_EXIT_OOM)) {
		proc_describe(&pr, &desc);
		buf_setf(&r->message, "compiler failed (%s; address-space limit %zu MiB)", desc.s,
			 lim.as_bytes >> 20);
		buf_add(&r->log, pr.errout.s, pr.errout.len < 4096 ? pr.errout.len : 4096);
		ret = 0;
		goto out;
	}
	if (pr.exited && pr.status == CHILD_EXIT_FORMAT) {
		buf_setf(&r->message, "%s", pr.errout.s);
		buf_trim(&r->message);
		ret = 0;
		goto out;
	}
	if (!pr.exited || pr.status != 0) {
		proc_describe(&pr, &desc);
		buf_trim(&pr.errout);
		kf_err(err, "compile child failed (%s)%s%s", desc.s, pr.errout.len ? ": " : "",
		       pr.errout.s);
		goto out;
	}
	if (read_reply(&pr.out, r, err) < 0)
		goto out;
	compile_parse_ptxas(r->log.s, r);
	if (!r->ok)
		buf_setf(&r->message, "NVRTC compile failed (see the log)");
	else if (cubin_calls_heap(r->cubin.s, r->cubin.len)) {
		r->ok = 0;
		buf_setf(&r->message, "the kernel calls device malloc/free: heap memory outlives a launch "
			 "(a place to keep results between launches); use declared scratch buffers");
	} else if (r->gmem > COMPILE_GMEM_MAX) {
		r->ok = 0;
		buf_setf(&r->message, "%lld bytes of static device memory (__device__/__managed__ variables): "
			 "over the limit of %lld (state that outlives a launch; use declared scratch "
			 "buffers)", r->gmem, (long long)COMPILE_GMEM_MAX);
	}
	ret = 0;
out:
	if (!r->ms)
		r->ms = (now_s() - t0) * 1e3;
	proc_result_release(&pr);
	buf_release(&req);
	buf_release(&desc);
	return ret;
}

/* The ELF header of a cubin, checked against len: NULL when it is none. */
static const Elf64_Ehdr *elf_header(const void *cubin, size_t len)
{
	const Elf64_Ehdr *eh = cubin;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > len ||
	    (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len - eh->e_shoff)
		return NULL;
	return eh;
}

/* Calls fn(symbol, its NUL-terminated name) for every symbol of every symbol
 * table inside len; stops at fn's first non-zero, which it returns (else 0). */
static int elf_each_symbol(const void *cubin, size_t len, const Elf64_Ehdr *eh,
			   int (*fn)(const Elf64_Sym *sym, const char *name, void *ctx), void *ctx)
{
	const unsigned char *b = cubin;

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr sh, st;
		memcpy(&sh, b + eh->e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh->e_shnum || sh.sh_offset > len ||
		    sh.sh_size > len - sh.sh_offset)
			continue;
		memcpy(&st, b + eh->e_shoff + (size_t)sh.sh_link * sizeof(st), sizeof(st));
		if (st.sh_offset > len || st.sh_size > len - st.sh_offset)
			continue;
		for (size_t k = 0; k + sizeof(Elf64_Sym) <= sh.sh_size; k += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			const char *name;
			int r;
			memcpy(&sym, b + sh.sh_offset + k, sizeof(sym));
			if (sym.st_name >= st.sh_size)
				continue;
			name = (const char *)b + st.sh_offset + sym.st_name;
			if (!memchr(name, 0, st.sh_size - sym.st_name))
				continue;
			if ((r = fn(&sym, name, ctx)) != 0)
				return r;
		}
	}
	return 0;
}

static int is_heap_call(const Elf64_Sym *sym, const char *name, void *ctx)
{
	(void)ctx;
	return sym->st_shndx == SHN_UNDEF && (!strcmp(name, "malloc") || !strcmp(name, "free"));
}

/* Whether the cubin (ELF64) has an undefined symbol malloc or free: the
 * device heap, which the driver gives a context whatever its limit says. */
int cubin_calls_heap(const void *cubin, size_t len)
{
	const Elf64_Ehdr *eh = elf_header(cubin, len);

	return eh && elf_each_symbol(cubin, len, eh, is_heap_call, NULL);
}

struct globals_walk {
	const unsigned char *b;
	const Elf64_Ehdr *eh;
	Elf64_Shdr ss;          /* section names */
	int (*fn)(const char *name, unsigned long long size, void *ctx);
	void *ctx;
	int n;
};

static int global_symbol(const Elf64_Sym *sym, const char *name, void *ctx)
{
	struct globals_walk *g = ctx;
	Elf64_Shdr ds;
	const char *sec;

	if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT || sym->st_shndx == SHN_UNDEF ||
	    sym->st_shndx >= g->eh->e_shnum)
		return 0;
	memcpy(&ds, g->b + g->eh->e_shoff + (size_t)sym->st_shndx * sizeof(ds), sizeof(ds));
	if (ds.sh_name >= g->ss.sh_size)
		return 0;
	sec = (const char *)g->b + g->ss.sh_offset + ds.sh_name;
	if (!memchr(sec, 0, g->ss.sh_size - ds.sh_name))
		return 0;
	/* .nv.global (zero-initialised) and .nv.global.init: the module's
	 * writable device variables (__managed__ too). */
	if (strncmp(sec, ".nv.global", 10) || !*name)
		return 0;
	g->n++;
	return g->fn && g->fn(name, sym->st_size, g->ctx) < 0;
}

int cubin_globals(const void *cubin, size_t len,
		  int (*fn)(const char *name, unsigned long long size, void *ctx), void *ctx)
{
	struct globals_walk g = { cubin, elf_header(cubin, len), { 0 }, fn, ctx, 0 };

	if (!g.eh || g.eh->e_shstrndx >= g.eh->e_shnum)
		return -1;
	memcpy(&g.ss, g.b + g.eh->e_shoff + (size_t)g.eh->e_shstrndx * sizeof(g.ss), sizeof(g.ss));
	if (g.ss.sh_offset > len || g.ss.sh_size > len - g.ss.sh_offset)
		return -1;
	elf_each_symbol(cubin, len, g.eh, global_symbol, &g);
	return g.n;
}

static struct kernel_stats *stats_for(struct compile_result *r, const char *name, size_t n,
				      int create)
{
	for (int i = 0; i < r->n_kernels; i++)
		if (strlen(r->kernels[i].name) == n && !memcmp(r->kernels[i].name, name, n))
			return &r->kernels[i];
	if (!create || r->n_kernels >= 1024)
		return NULL;
	r->kernels = xrealloc(r->kernels, (size_t)(r->n_kernels + 1) * sizeof(*r->kernels));
	memset(&r->kernels[r->n_kernels], 0, sizeof(*r->kernels));
	r->kernels[r->n_kernels].name = strndup(name, n);
	return &r->kernels[r->n_kernels++];
}

/* The number before `what` on the line, or 0. */
static int num_before(const char *l, const char *e, const char *what)
{
	size_t wl = strlen(what);
	for (const char *p = l; p + wl <= e; p++)
		if (!memcmp(p, what, wl)) {
			const char *q = p;
			while (q > l && q[-1] == ' ')
				q--;
			while (q > l && q[-1] >= '0' && q[-1] <= '9')
				q--;
			return atoi(q);
		}
	return 0;
}

static const char *quoted(const char *l, const char *e, const char *after, size_t *n)
{
	const char *p = memmem(l, (size_t)(e - l), after, strlen(after)), *q;
	if (!p)
		return NULL;
	p += strlen(after);
	q = memchr(p, '\'', (size_t)(e - p));
	if (!q)
		return NULL;
	*n = (size_t)(q - p);
	return p;
}

int compile_parse_ptxas(const char *log, struct compile_result *r)
{
	struct kernel_stats *entry = NULL, *props = NULL;
	const char *l = log;

	free_kernels(r);
	r->gmem = 0;
	while (*l) {
		const char *e = strchr(l, '\n'), *name;
		size_t n;
		if (!e)
			e = l + strlen(l);
		if ((name = quoted(l, e, "Compiling entry function '", &n))) {
			entry = stats_for(r, name, n, 1);
		} else if ((name = memmem(l, (size_t)(e - l), "Function properties for ", 24))) {
			name += 24;
			n = (size_t)(e - name);
			if (n && *name == '\'') {
				name++;
				n--;
			}
			while (n && (name[n - 1] == ' ' || name[n - 1] == '\r' || name[n - 1] == '\''))
				n--;
			props = stats_for(r, name, n, 0);
		} else if (memmem(l, (size_t)(e - l), "bytes gmem", 10)) {
			r->gmem += num_before(l, e, "bytes gmem");
		} else if (memmem(l, (size_t)(e - l), "bytes stack frame", 17)) {
			if (props) {
				props->stack = num_before(l, e, "bytes stack frame");
				props->spill_stores = num_before(l, e, "bytes spill stores");
				props->spill_loads = num_before(l, e, "bytes spill loads");
			}
		} else if (memmem(l, (size_t)(e - l), "Used ", 5) && entry) {
			entry->registers = num_before(l, e, "registers");
			entry->smem_static = num_before(l, e, "bytes smem");
			entry->cmem = num_before(l, e, "bytes cmem[0]");
			entry = NULL;
		}
		l = *e ? e + 1 : e;
	}
	return r->n_kernels;
}
