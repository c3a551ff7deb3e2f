/* Problem specs: parsing and checking spec.json (docs/formats.md). Every
 * error names the file and the field; nothing from the file is trusted. */
#include "problem/problem.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_LIMIT (1LL << 40)        /* any one named size */
#define NUMEL_LIMIT (1LL << 40)       /* elements of one tensor */

static const char *const dtype_names[] = { "float32", "float16", "bfloat16", "int64", "int32",
					   "bool" };
static const size_t dtype_sizes[] = { 4, 2, 2, 8, 4, 1 };

const char *kf_dtype_name(enum kf_dtype t)
{
	return (unsigned)t < 6 ? dtype_names[t] : "?";
}

int kf_dtype_parse(const char *s)
{
	for (int i = 0; i < 6; i++)
		if (s && !strcmp(s, dtype_names[i]))
			return i;
	return -1;
}

size_t kf_dtype_size(enum kf_dtype t)
{
	return (unsigned)t < 6 ? dtype_sizes[t] : 0;
}

void problem_init(struct problem *p)
{
	memset(p, 0, sizeof(*p));
}

void problem_release(struct problem *p)
{
	free(p->id);
	free(p->dir);
	free(p->name);
	free(p->family);
	free(p->kernelbench_file);
	free(p->operation);
	for (int i = 0; i < p->n_sizes; i++)
		free(p->size_names[i]);
	for (int i = 0; i < p->n_scalars; i++)
		free(p->scalar_names[i]);
	for (int i = 0; p->t && i < p->n_in + p->n_out; i++)
		free(p->t[i].name);
	free(p->t);
	free(p->torch_text);
	free(p->reference_src);
	free(p->spec_text);
	json_decref(p->spec);
	memset(p, 0, sizeof(*p));
}

int problem_size(const struct problem *p, const char *name, long long *out)
{
	for (int i = 0; i < p->n_sizes; i++)
		if (!strcmp(p->size_names[i], name)) {
			*out = p->size_vals[i];
			return 0;
		}
	return -1;
}

int problem_scalar(const struct problem *p, const char *name, double *out)
{
	for (int i = 0; i < p->n_scalars; i++)
		if (!strcmp(p->scalar_names[i], name)) {
			*out = p->scalar_vals[i];
			return 0;
		}
	return -1;
}

int problem_tensor_index(const struct problem *p, const char *name)
{
	for (int i = 0; i < p->n_in + p->n_out; i++)
		if (!strcmp(p->t[i].name, name))
			return i;
	return -1;
}

static int is_ident(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

static int req_field(const json_t *o, const char *key, int type, json_t **out, const char *file,
		     const char *where, struct buf *err)
{
	static const char *const tn[] = { [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
					  [JSON_STRING] = "a string", [JSON_INTEGER] = "an integer",
					  [JSON_REAL] = "a number" };
	json_t *v = json_object_get(o, key);
	int ok;

	if (!v)
		return kf_err(err, "%s: missing field \"%s%s\"", file, where, key);
	ok = type == JSON_REAL ? json_is_number(v) : (int)json_typeof(v) == type;
	if (!ok)
		return kf_err(err, "%s: field \"%s%s\" must be %s", file, where, key, tn[type]);
	*out = v;
	return 0;
}

static int req_str(const json_t *o, const char *key, char **out, const char *file, struct buf *err)
{
	json_t *v;
	if (req_field(o, key, JSON_STRING, &v, file, "", err) < 0)
		return -1;
	*out = xstrdup(json_string_value(v));
	return 0;
}

static int parse_sizes(struct problem *p, const char *file, struct buf *err)
{
	json_t *o, *v;
	const char *k;

	if (req_field(p->spec, "sizes", JSON_OBJECT, &o, file, "", err) < 0)
		return -1;
	json_object_foreach(o, k, v) {
		json_int_t n;
		if (p->n_sizes >= PROBLEM_MAX_SIZES)
			return kf_err(err, "%s: field \"sizes\": more than %d sizes", file,
				      PROBLEM_MAX_SIZES);
		if (!is_ident(k))
			return kf_err(err, "%s: field \"sizes.%s\": not an identifier", file, k);
		if (!json_is_integer(v))
			return kf_err(err, "%s: field \"sizes.%s\" must be an integer", file, k);
		n = json_integer_value(v);
		if (n <= 0)
			return kf_err(err, "%s: field \"sizes.%s\" must be positive (is %lld)", file,
				      k, (long long)n);
		if (n > SIZE_LIMIT)
			return kf_err(err, "%s: field \"sizes.%s\" is too large (%lld > 2^40)", file,
				      k, (long long)n);
		p->size_names[p->n_sizes] = xstrdup(k);
		p->size_vals[p->n_sizes++] = n;
	}
	o = json_object_get(p->spec, "scalars");
	if (o && !json_is_object(o))
		return kf_err(err, "%s: field \"scalars\" must be an object", file);
	json_object_foreach(o, k, v) {
		if (p->n_scalars >= PROBLEM_MAX_SIZES)
			return kf_err(err, "%s: field \"scalars\": more than %d scalars", file,
				      PROBLEM_MAX_SIZES);
		if (!is_ident(k))
			return kf_err(err, "%s: field \"scalars.%s\": not an identifier", file, k);
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return kf_err(err, "%s: field \"scalars.%s\" must be a finite number", file, k);
		p->scalar_names[p->n_scalars] = xstrdup(k);
		p->scalar_vals[p->n_scalars++] = json_number_value(v);
	}
	return 0;
}

static int parse_post(struct kf_dist *d, const json_t *post, const char *file, const char *where,
		      struct buf *err)
{
	static const char *const names[] = { "none", "symmetrize", "triu", "tril",
					     "scale_by_random", "softmax_lastdim" };
	if (!post) {
		d->post = KF_POST_NONE;
		return 0;
	}
	if (json_is_array(post) && json_array_size(post) == 2 &&
	    json_is_string(json_array_get(post, 0)) && json_is_string(json_array_get(post, 1)) &&
	    !strcmp(json_string_value(json_array_get(post, 0)), "scale_by_random") &&
	    !strcmp(json_string_value(json_array_get(post, 1)), "softmax_lastdim")) {
		d->post = KF_POST_SCALED_SOFTMAX;
		return 0;
	}
	if (json_is_array(post) && json_array_size(post) == 1)
		post = json_array_get(post, 0);
	if (json_is_string(post))
		for (int i = 0; i < 6; i++)
			if (!strcmp(json_string_value(post), names[i])) {
				d->post = (enum kf_dist_post)i;
				return 0;
			}
	return kf_err(err, "%s: field \"%spost\": unknown post op (symmetrize, triu, tril, "
		      "scale_by_random, softmax_lastdim, or [\"scale_by_random\", "
		      "\"softmax_lastdim\"])", file, where);
}

static int parse_dist(struct kf_dist *d, const json_t *o, const char *file, const char *where,
		      struct buf *err)
{
	static const struct {
		const char *kind, *pa, *pb;
	} kinds[] = {
		{ "uniform", "low", "high" }, { "normal", "mean", "std" },
		{ "randint", "low", "high" }, { "bernoulli", "p", NULL },
		{ "sign", NULL, NULL },       { "constant", "value", NULL },
	};
	json_t *k, *v;
	char w[96];
	int i;

	snprintf(w, sizeof(w), "%sdist.", where);
	if (req_field(o, "kind", JSON_STRING, &k, file, w, err) < 0)
		return -1;
	for (i = 0; i < 6; i++)
		if (!strcmp(json_string_value(k), kinds[i].kind))
			break;
	if (i == 6)
		return kf_err(err, "%s: field \"%skind\": unknown distribution \"%s\"", file, w,
			      json_string_value(k));
	d->kind = (enum kf_dist_kind)i;
	d->a = d->b = 0;
	if (kinds[i].pa) {
		if (req_field(o, kinds[i].pa, JSON_REAL, &v, file, w, err) < 0)
			return -1;
		d->a = json_number_value(v);
	}
	if (kinds[i].pb) {
		if (req_field(o, kinds[i].pb, JSON_REAL, &v, file, w, err) < 0)
			return -1;
		d->b = json_number_value(v);
	}
	if (!isfinite(d->a) || !isfinite(d->b))
		return kf_err(err, "%s: field \"%s\": parameters must be finite", file, w);
	if ((d->kind == KF_DIST_UNIFORM && !(d->b > d->a)) ||
	    (d->kind == KF_DIST_RANDINT && (!(d->b > d->a) || d->a != floor(d->a) ||
					    d->b != floor(d->b) || d->b - d->a > 9e15)) ||
	    (d->kind == KF_DIST_NORMAL && !(d->b >= 0)) ||
	    (d->kind == KF_DIST_BERNOULLI && !(d->a >= 0 && d->a <= 1)))
		return kf_err(err, "%s: field \"%s\": bad parameters for %s", file, w,
			      kinds[i].kind);
	return parse_post(d, json_object_get(o, "post"), file, w, err);
}

static int parse_shape(struct problem *p, struct problem_tensor *t, const json_t *o,
		       const char *file, const char *where, struct buf *err)
{
	json_t *shape, *d;
	size_t i;
	long long numel = 1;

	if (req_field(o, "shape", JSON_ARRAY, &shape, file, where, err) < 0)
		return -1;
	if (json_array_size(shape) > PROBLEM_MAX_DIMS)
		return kf_err(err, "%s: field \"%sshape\": more than %d dims", file, where,
			      PROBLEM_MAX_DIMS);
	json_array_foreach(shape, i, d) {
		long long n;
		if (json_is_string(d)) {
			if (problem_size(p, json_string_value(d), &n) < 0)
				return kf_err(err, "%s: field \"%sshape[%zu]\": \"%s\" is not in sizes",
					      file, where, i, json_string_value(d));
		} else if (json_is_integer(d)) {
			n = json_integer_value(d);
			if (n <= 0 || n > SIZE_LIMIT)
				return kf_err(err, "%s: field \"%sshape[%zu]\": %lld is not a positive "
					      "size", file, where, i, n);
		} else {
			return kf_err(err, "%s: field \"%sshape[%zu]\" must be a size name or an "
				      "integer", file, where, i);
		}
		if (__builtin_mul_overflow(numel, n, &numel) || numel > NUMEL_LIMIT)
			return kf_err(err, "%s: field \"%sshape\": too many elements (over 2^40)",
				      file, where);
		t->shape[t->ndim++] = n;
	}
	t->numel = numel;
	t->bytes = (size_t)numel * kf_dtype_size(t->dtype);
	return 0;
}

/* "alive": {dist fields, "set": [[lo, hi, value], ...]} (problem.h). */
static int parse_alive(struct problem_tensor *t, const json_t *o, const char *file,
		       const char *where, struct buf *err)
{
	char w[96];
	json_t *set, *r;
	size_t i;

	snprintf(w, sizeof(w), "%salive.", where);
	if (!json_is_object(o))
		return kf_err(err, "%s: field \"%salive\" must be an object", file, where);
	if (parse_dist(&t->alive, o, file, w, err) < 0)
		return -1;
	if (t->alive.post != KF_POST_NONE || (t->dtype != KF_F32 && t->dtype != KF_F16 &&
					       t->dtype != KF_BF16))
		return kf_err(err, "%s: field \"%s\": a floating-point draw without post op only",
			      file, w);
	set = json_object_get(o, "set");
	if (set && (!json_is_array(set) || json_array_size(set) > PROBLEM_MAX_SETS))
		return kf_err(err, "%s: field \"%sset\": an array of at most %d [lo, hi, value]",
			      file, w, PROBLEM_MAX_SETS);
	json_array_foreach(set, i, r) {
		json_t *lo = json_array_get(r, 0), *hi = json_array_get(r, 1), *v = json_array_get(r, 2);
		if (!json_is_array(r) || json_array_size(r) != 3 || !json_is_integer(lo) ||
		    !json_is_integer(hi) || !json_is_number(v) ||
		    json_integer_value(lo) < 0 || json_integer_value(hi) <= json_integer_value(lo) ||
		    json_integer_value(hi) > t->numel || !isfinite(json_number_value(v)))
			return kf_err(err, "%s: field \"%sset[%zu]\": [lo, hi, value] with "
				      "0 <= lo < hi <= %lld and a finite value", file, w, i, t->numel);
		t->set_lo[i] = json_integer_value(lo);
		t->set_hi[i] = json_integer_value(hi);
		t->set_v[i] = json_number_value(v);
		t->n_set = (int)i + 1;
		for (size_t q = 0; q < i; q++)   /* CPU and GPU agree only without overlaps */
			if (t->set_lo[q] < t->set_hi[i] && t->set_lo[i] < t->set_hi[q])
				return kf_err(err, "%s: field \"%sset[%zu]\": overlaps set[%zu]", file, w,
					      i, q);
	}
	t->has_alive = 1;
	return 0;
}

static int parse_tensor(struct problem *p, const json_t *o, int output, int idx,
			const char *file, struct buf *err)
{
	struct problem_tensor *t = &p->t[p->n_in + p->n_out];
	char where[64];
	json_t *v;
	int dt;

	snprintf(where, sizeof(where), "%s[%d].", output ? "outputs" : "inputs", idx);
	if (!json_is_object(o))
		return kf_err(err, "%s: field \"%s\" must be an object",
			      file, output ? "outputs[]" : "inputs[]");
	if (req_field(o, "name", JSON_STRING, &v, file, where, err) < 0)
		return -1;
	if (!is_ident(json_string_value(v)))
		return kf_err(err, "%s: field \"%sname\": \"%s\" is not an identifier", file, where,
			      json_string_value(v));
	if (problem_tensor_index(p, json_string_value(v)) >= 0 ||
	    problem_size(p, json_string_value(v), &(long long){ 0 }) == 0)
		return kf_err(err, "%s: field \"%sname\": \"%s\" is used twice", file, where,
			      json_string_value(v));
	t->name = xstrdup(json_string_value(v));
	if (output)
		p->n_out++;
	else
		p->n_in++;
	if (req_field(o, "dtype", JSON_STRING, &v, file, where, err) < 0)
		return -1;
	dt = kf_dtype_parse(json_string_value(v));
	if (dt < 0)
		return kf_err(err, "%s: field \"%sdtype\": unknown dtype \"%s\"", file, where,
			      json_string_value(v));
	t->dtype = (enum kf_dtype)dt;
	if (parse_shape(p, t, o, file, where, err) < 0)
		return -1;
	if (output) {
		t->role = KF_ROLE_OUTPUT;
		return 0;
	}
	if (req_field(o, "role", JSON_STRING, &v, file, where, err) < 0)
		return -1;
	if (!strcmp(json_string_value(v), "input"))
		t->role = KF_ROLE_INPUT;
	else if (!strcmp(json_string_value(v), "param"))
		t->role = KF_ROLE_PARAM;
	else
		return kf_err(err, "%s: field \"%srole\": \"%s\" is neither input nor param", file,
			      where, json_string_value(v));
	if (t->ndim == 0)
		return kf_err(err, "%s: field \"%sshape\": an input needs at least one dim", file,
			      where);
	if (req_field(o, "dist", JSON_OBJECT, &v, file, where, err) < 0 ||
	    parse_dist(&t->dist, v, file, where, err) < 0)
		return -1;
	if ((t->dist.post == KF_POST_SYMMETRIZE || t->dist.post == KF_POST_TRIU ||
	     t->dist.post == KF_POST_TRIL) &&
	    (t->ndim < 2 || (t->dist.post == KF_POST_SYMMETRIZE &&
			     t->shape[t->ndim - 1] != t->shape[t->ndim - 2])))
		return kf_err(err, "%s: field \"%sdist.post\": needs %s last two dims", file, where,
			      t->dist.post == KF_POST_SYMMETRIZE ? "square" : "two");
	if ((v = json_object_get(o, "alive")) && parse_alive(t, v, file, where, err) < 0)
		return -1;
	return 0;
}

static int parse_tensors(struct problem *p, const char *file, struct buf *err)
{
	json_t *in, *out, *v;
	size_t i;

	if (req_field(p->spec, "inputs", JSON_ARRAY, &in, file, "", err) < 0 ||
	    req_field(p->spec, "outputs", JSON_ARRAY, &out, file, "", err) < 0)
		return -1;
	if (json_array_size(in) == 0 || json_array_size(out) == 0)
		return kf_err(err, "%s: field \"%s\": at least one tensor is needed", file,
			      json_array_size(in) ? "outputs" : "inputs");
	if (json_array_size(in) + json_array_size(out) > PROBLEM_MAX_TENSORS)
		return kf_err(err, "%s: fields \"inputs\" and \"outputs\": %zu tensors, more than "
			      "%d in all", file, json_array_size(in) + json_array_size(out),
			      PROBLEM_MAX_TENSORS);
	p->t = xcalloc(json_array_size(in) + json_array_size(out), sizeof(*p->t));
	json_array_foreach(in, i, v)
		if (parse_tensor(p, v, 0, (int)i, file, err) < 0)
			return -1;
	json_array_foreach(out, i, v)
		if (parse_tensor(p, v, 1, (int)i, file, err) < 0)
			return -1;
	return 0;
}

static int parse_spec(struct problem *p, const char *file, struct buf *err)
{
	json_t *v;
	const char *tol;

	if (!json_is_object(p->spec))
		return kf_err(err, "%s: the spec must be a JSON object", file);
	if (req_str(p->spec, "id", &p->id, file, err) < 0 ||
	    req_str(p->spec, "name", &p->name, file, err) < 0 ||
	    req_str(p->spec, "family", &p->family, file, err) < 0 ||
	    req_str(p->spec, "kernelbench_file", &p->kernelbench_file, file, err) < 0)
		return -1;
	v = json_object_get(p->spec, "operation");
	p->operation = xstrdup(json_is_string(v) ? json_string_value(v) : "");
	if (req_field(p->spec, "level", JSON_INTEGER, &v, file, "", err) < 0)
		return -1;
	if (json_integer_value(v) < 1 || json_integer_value(v) > 9)
		return kf_err(err, "%s: field \"level\" must be 1..9", file);
	p->level = (int)json_integer_value(v);
	if (req_field(p->spec, "number", JSON_INTEGER, &v, file, "", err) < 0)
		return -1;
	if (json_integer_value(v) < 1 || json_integer_value(v) > 9999)
		return kf_err(err, "%s: field \"number\" must be 1..9999", file);
	p->number = (int)json_integer_value(v);
	if (parse_sizes(p, file, err) < 0 || parse_tensors(p, file, err) < 0)
		return -1;
	if (req_field(p->spec, "tolerance", JSON_STRING, &v, file, "", err) < 0)
		return -1;
	tol = json_string_value(v);
	if (!strcmp(tol, "fp32")) {
		p->tol = KF_TOL_FP32;
		p->atol = p->rtol = 1e-4;
	} else if (!strcmp(tol, "fp16") || !strcmp(tol, "bf16")) {
		p->tol = tol[0] == 'f' ? KF_TOL_FP16 : KF_TOL_BF16;
		p->atol = p->rtol = 1e-2;
	} else if (!strcmp(tol, "exact")) {
		p->tol = KF_TOL_EXACT;
		p->atol = p->rtol = 0;
	} else {
		return kf_err(err, "%s: field \"tolerance\": unknown class \"%s\" (fp32, fp16, "
			      "bf16, exact)", file, tol);
	}
	if (req_field(p->spec, "flops", JSON_REAL, &v, file, "", err) < 0)
		return -1;
	p->flops = json_number_value(v);
	if (req_field(p->spec, "min_bytes", JSON_REAL, &v, file, "", err) < 0)
		return -1;
	p->min_bytes = json_number_value(v);
	if (!(p->flops >= 0 && p->flops < 1e21) || !(p->min_bytes > 0 && p->min_bytes < 1e18))
		return kf_err(err, "%s: field \"%s\" is out of range", file,
			      p->flops >= 0 && p->flops < 1e21 ? "min_bytes" : "flops");
	/* Fewer FLOPs than the problem's own graph where a correct kernel can
	 * fold it (a linear summed over its features is a matrix-vector
	 * product): the floor must not reject that kernel (docs/formats.md). */
	p->floor_flops = 0;
	if ((v = json_object_get(p->spec, "floor_flops"))) {
		if (!json_is_number(v) || !(json_number_value(v) > 0 && json_number_value(v) <= p->flops) ||
		    !json_is_string(json_object_get(p->spec, "floor_flops_why")))
			return kf_err(err, "%s: field \"floor_flops\" must be a number in (0, flops], with "
				      "\"floor_flops_why\"", file);
		p->floor_flops = json_number_value(v);
	}
	/* Where PyTorch's own fp32 forward misses the exact result on the
	 * U[-100, 100) draw, the spec names a smaller bound (docs/problems.md). */
	p->wide_bound = 0;
	if ((v = json_object_get(p->spec, "wide_bound"))) {
		if (!json_is_number(v) || !(json_number_value(v) >= 0.01 && json_number_value(v) <= 100))
			return kf_err(err, "%s: field \"wide_bound\" must be a number in [0.01, 100]", file);
		p->wide_bound = json_number_value(v);
	}
	return 0;
}

/* reference.py states its sizes as module-level `name = INT` lines (as
 * KernelBench does); each must agree with the spec. */
static int check_torch_sizes(const struct problem *p, const char *file, const char *specfile,
			     struct buf *err)
{
	const char *s = p->torch_text;
	int line = 1;

	while (s && *s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char name[64];
		long long v, want;
		int used = 0;
		if (n < 200 && sscanf(s, "%63[A-Za-z0-9_] = %lld%n", name, &v, &used) == 2 &&
		    (size_t)used == n && problem_size(p, name, &want) == 0 && v != want)
			return kf_err(err, "%s:%d: %s = %lld, but %s has sizes.%s = %lld", file, line,
				      name, v, specfile, name, want);
		s = e ? e + 1 : s + n;
		line++;
	}
	return 0;
}

static int load(struct problem *p, const char *spec_text, size_t len, const char *file,
		struct buf *err)
{
	struct buf e2 = BUF_INIT;

	p->spec = json_parse_bounded(spec_text, len, PROBLEM_SPEC_MAX, &e2);
	if (!p->spec) {
		kf_err(err, "%s: %s", file, e2.s);
		buf_release(&e2);
		return -1;
	}
	buf_release(&e2);
	p->spec_text = xstrndup(spec_text, len);
	p->spec_len = len;
	return parse_spec(p, file, err);
}

int problem_load_json(struct problem *p, const char *spec_text, const char *origin,
		      struct buf *err)
{
	problem_release(p);
	if (load(p, spec_text, strlen(spec_text), origin ? origin : "spec", err) < 0) {
		problem_release(p);
		return -1;
	}
	p->dir = xstrdup("");
	return 0;
}

static int read_text(const char *dir, const char *name, char **out, int required,
		     struct buf *err)
{
	struct buf path = BUF_INIT, b = BUF_INIT;
	int ret = 0;

	path_join(&path, dir, name);
	if (!required && !file_exists(path.s))
		goto out;
	if (buf_read_file(&b, path.s, PROBLEM_TEXT_MAX, err) < 0)
		ret = -1;
	else
		*out = buf_detach(&b, NULL);
out:
	buf_release(&path);
	buf_release(&b);
	return ret;
}

int problem_read_spec(const char *dir, struct buf *text, json_t **js, struct buf *err)
{
	struct buf path = BUF_INIT, t = BUF_INIT, e2 = BUF_INIT;
	struct buf *b = text ? text : &t;
	int ret = -1;

	if (js)
		*js = NULL;
	path_join(&path, dir, "spec.json");
	buf_reset(b);
	if (buf_read_file(b, path.s, PROBLEM_SPEC_MAX, err) < 0)
		goto out;
	if (js && !(*js = json_parse_bounded(b->s, b->len, PROBLEM_SPEC_MAX, &e2))) {
		kf_err(err, "%s: %s", path.s, e2.s);
		goto out;
	}
	ret = 0;
out:
	buf_release(&path);
	buf_release(&t);
	buf_release(&e2);
	return ret;
}

int problem_load(struct problem *p, const char *dir, struct buf *err)
{
	struct buf path = BUF_INIT, text = BUF_INIT, tpath = BUF_INIT;
	int ret = -1;

	problem_release(p);
	path_join(&path, dir, "spec.json");
	if (problem_read_spec(dir, &text, NULL, err) < 0)
		goto out;
	if (load(p, text.s, text.len, path.s, err) < 0)
		goto out;
	p->dir = xstrdup(dir);
	{
		/* id is levelN/<directory name>; the directory starts with the number */
		struct buf d = BUF_INIT;
		const char *base, *slash = strchr(p->id, '/');
		int bad;
		buf_adds(&d, dir);
		while (d.len > 1 && d.s[d.len - 1] == '/')
			buf_truncate(&d, d.len - 1);
		base = strrchr(d.s, '/') ? strrchr(d.s, '/') + 1 : d.s;
		bad = !slash || strcmp(slash + 1, base) || atoi(base) != p->number;
		if (bad)
			kf_err(err, "%s: field \"id\" (\"%s\") or \"number\" (%d) does not match the "
			       "directory %s", path.s, p->id, p->number, base);
		buf_release(&d);
		if (bad)
			goto out;
	}
	if (read_text(dir, "reference.py", &p->torch_text, 1, err) < 0 ||
	    read_text(dir, "reference.cu", &p->reference_src, 1, err) < 0)
		goto out;
	path_join(&tpath, dir, "reference.py");
	if (check_torch_sizes(p, tpath.s, path.s, err) < 0)
		goto out;
	ret = 0;
out:
	if (ret < 0)
		problem_release(p);
	buf_release(&path);
	buf_release(&text);
	buf_release(&tpath);
	return ret;
}

size_t problem_memory_plan(const struct problem *p, size_t l2_flush_bytes, struct buf *detail)
{
	size_t in = 0, out = 0, guards, total;
	int nbuf = p->n_in + 2 * p->n_out;

	for (int i = 0; i < p->n_in; i++)
		in += p->t[i].bytes;
	for (int i = p->n_in; i < p->n_in + p->n_out; i++)
		out += p->t[i].bytes;
	guards = (size_t)nbuf * 2 * PROBLEM_GUARD_BYTES;
	total = in + 2 * out + guards + l2_flush_bytes;
	if (detail) {
		buf_addf(detail, "inputs and params  %14zu bytes (%d tensors)\n", in, p->n_in);
		buf_addf(detail, "reference outputs  %14zu bytes\n", out);
		buf_addf(detail, "candidate outputs  %14zu bytes\n", out);
		buf_addf(detail, "guards             %14zu bytes (%d buffers x 2 x %d)\n", guards,
			 nbuf, PROBLEM_GUARD_BYTES);
		buf_addf(detail, "L2 flush buffer    %14zu bytes\n", l2_flush_bytes);
		buf_addf(detail, "total              %14zu bytes (%.2f GiB)\n", total,
			 (double)total / (1024.0 * 1024 * 1024));
	}
	return total;
}

double problem_roofline_ms(const struct problem *p, double gbps, double gflops)
{
	double tb = gbps > 0 ? p->min_bytes / (gbps * 1e9) : 0;
	double tf = gflops > 0 ? (p->floor_flops > 0 ? p->floor_flops : p->flops) / (gflops * 1e9) : 0;
	return 1e3 * (tb > tf ? tb : tf);
}
