/* einsum (SPEC 12) with NumPy's notation: "ij,jk->ik", implicit output
 * (the letters used once, in ASCII order, after the broadcast dims),
 * repeated letters within an operand (diagonals), "..." broadcasting; a
 * letter of size 1 in one operand broadcasts against the others (NumPy).
 *
 * Lowering: repeated letters become strided diagonal views; a letter only
 * one operand has and the output lacks is summed there (reduce_sum); then
 * operands are contracted two at a time, the pair with the smallest result
 * first, each contraction one batched matrix product (tc_matmul) of the
 * operands permuted to [batch, free, summed] and [batch, summed, free].
 * So integers are exact with wrapping (under check / saturate, an output
 * that may leave the dtype is computed exactly instead, src/overflow.c),
 * and float results are the GEMM's,
 * the same for every thread count. Bool computes in i64 and gives
 * (sum != 0), which is NumPy's or-of-ands. */
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "linalg.h"

#define NLET 52                       /* A-Z then a-z: label ids in ASCII order */
#define NLAB TC_EINSUM_LABELS         /* then the broadcast ("...") dims */
#define MAX_OPS TC_EINSUM_OPS

typedef struct {
  int n;                               /* letters in the term */
  int lab[NLAB];
  int pos[NLAB];                       /* byte offset in spec, for carets */
  int ell;                             /* letters before "...", or -1 */
  int ell_pos, start, end;
} term;

/* An operand being contracted: a view with one dim per distinct label. */
typedef tc_einsum_opnd opnd;

static int letter_id(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? 26 + c - 'a' : -1; }
static char label_char(int l) { return (char)(l < 26 ? 'A' + l : 'a' + l - 26); }

static tc_tensor *spec_err(tc_err *err, tc_code code, int start, int end, const char *msg) {
  tc_err_set(err, code, TC_OP_EINSUM, -1, "%s", msg);
  err->start = start;
  err->end = end;
  return NULL;
}

/* Parses one term from *p up to ',', "->" or the end. */
static int parse_term(const char *spec, const char **pp, term *t, bool output, tc_err *err) {
  const char *p = *pp;
  memset(t, 0, sizeof *t);
  t->ell = -1;
  t->start = (int)(p - spec);
  for (; *p && *p != ',' && !(p[0] == '-' && p[1] == '>'); p++) {
    int at = (int)(p - spec);
    if (*p == ' ') continue;
    if (*p == '.') {
      if (strncmp(p, "...", 3) != 0)
        return spec_err(err, TC_E_BAD_ARG, at, at + 1, "'.' must be part of \"...\""), -1;
      if (t->ell >= 0)
        return spec_err(err, TC_E_BAD_ARG, at, at + 3, "\"...\" appears twice in one term"), -1;
      t->ell = t->n;
      t->ell_pos = at;
      p += 2;
      continue;
    }
    int id = letter_id(*p);
    if (id < 0) {
      char what[96];
      snprintf(what, sizeof what, "'%c' is not a subscript letter (A-Z, a-z, \"...\", ',' and \"->\")", *p);
      return spec_err(err, TC_E_BAD_ARG, at, at + 1, what), -1;
    }
    if (t->n >= TC_MAX_DIMS)
      return spec_err(err, TC_E_BAD_ARG, at, at + 1, "a term has more than 16 subscripts"), -1;
    if (output)
      for (int i = 0; i < t->n; i++)
        if (t->lab[i] == id) {
          char what[64];
          snprintf(what, sizeof what, "'%c' appears twice in the output", *p);
          return spec_err(err, TC_E_BAD_ARG, at, at + 1, what), -1;
        }
    t->pos[t->n] = at;
    t->lab[t->n++] = id;
  }
  t->end = (int)(p - spec);
  *pp = p;
  return 0;
}

/* The label of each dim of operand t of a term with ell_dims broadcast dims. */
static void dim_labels(const term *t, int ell_dims, int ell_rank, int *lab, int *pos) {
  int k = 0;
  for (int i = 0; i <= t->n; i++) {
    if (i == t->ell)
      for (int j = 0; j < ell_dims; j++) { pos[k] = t->ell_pos; lab[k++] = NLET + ell_rank - ell_dims + j; }
    if (i < t->n) { pos[k] = t->pos[i]; lab[k++] = t->lab[i]; }
  }
}

static int find(const int *v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

/* A view of o with dims in label order `order`, each of its global size
 * (a size-1 broadcast dim or a missing label gets stride 0). */
static tc_tensor *arrange(const opnd *o, int n, const int *order, const int64_t *gsize, tc_err *err) {
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int d = find(o->lab, o->n, order[i]);
    shape[i] = gsize[order[i]];
    strides[i] = d < 0 || o->t->shape[d] != shape[i] ? 0 : o->t->strides[d];
  }
  return tc_view(o->t, n, shape, strides, o->t->offset, err);
}

/* x (owned) contiguous and viewed with another shape of the same size. */
static tc_tensor *reshaped(tc_tensor *x, int n, const int64_t *shape, tc_err *err) {
  tc_tensor *c = x ? tc_contiguous(x, err) : NULL;
  tc_tensor_free(x);
  if (!c) return NULL;
  int64_t st[TC_MAX_DIMS], s = 1;
  for (int i = n - 1; i >= 0; i--) { st[i] = s; s *= shape[i] ? shape[i] : 1; }
  tc_tensor *v = tc_view(c, n, shape, st, c->offset, err);
  tc_tensor_free(c);
  return v;
}

/* Whether label l is needed outside operand `self` (the output, or another operand). */
static bool needed(int l, const opnd *ops, int nops, int self, int other, const term *out) {
  if (find(out->lab, out->n, l) >= 0) return true;
  for (int i = 0; i < nops; i++)
    if (i != self && i != other && ops[i].t && find(ops[i].lab, ops[i].n, l) >= 0) return true;
  return false;
}

/* Sums the labels operand i alone has and nothing needs. */
static int sum_private(opnd *ops, int nops, int i, const term *out, tc_err *err) {
  opnd *o = &ops[i];
  tc_axes ax = {.all = false, .n = 0};
  opnd keep = {.n = 0};
  for (int d = 0; d < o->n; d++) {
    if (needed(o->lab[d], ops, nops, i, -1, out)) keep.lab[keep.n++] = o->lab[d];
    else ax.axis[ax.n++] = d;
  }
  if (ax.n == 0) return 0;
  tc_tensor *r = tc_reduce(TC_OP_REDUCE_SUM, o->t, &ax, false, err);
  if (!r) return -1;
  tc_tensor_free(o->t);
  o->t = r;
  o->n = keep.n;
  memcpy(o->lab, keep.lab, sizeof keep.lab);
  return 0;
}

/* The labels of contracting i with j: batch (both, needed), contracted
 * (both, not needed), free a, free b. Returns the result's element count. */
typedef struct { int nb, nk, nfa, nfb; int b[TC_MAX_DIMS], k[TC_MAX_DIMS], fa[TC_MAX_DIMS], fb[TC_MAX_DIMS]; } plan;

static double plan_pair(const opnd *ops, int nops, int i, int j, const term *out, const int64_t *gsize, plan *p) {
  const opnd *a = &ops[i], *b = &ops[j];
  double size = 1;
  memset(p, 0, sizeof *p);
  for (int d = 0; d < a->n; d++) {
    int l = a->lab[d];
    if (find(b->lab, b->n, l) < 0) { p->fa[p->nfa++] = l; size *= (double)gsize[l]; }
    else if (needed(l, ops, nops, i, j, out)) { p->b[p->nb++] = l; size *= (double)gsize[l]; }
    else p->k[p->nk++] = l;
  }
  for (int d = 0; d < b->n; d++)
    if (find(a->lab, a->n, b->lab[d]) < 0) { p->fb[p->nfb++] = b->lab[d]; size *= (double)gsize[b->lab[d]]; }
  return size;
}

static int64_t prod(const int *labs, int n, const int64_t *gsize) {
  int64_t r = 1;
  for (int i = 0; i < n; i++) r *= gsize[labs[i]];
  return r;
}

/* ops[i] = contraction of ops[i] and ops[j]; ops[j] freed. */
static int contract(opnd *ops, int i, int j, const plan *p, const int64_t *gsize, tc_err *err) {
  int nr = p->nb + p->nfa + p->nfb;
  if (nr > TC_MAX_DIMS || p->nb + p->nfa + p->nk > TC_MAX_DIMS || p->nb + p->nk + p->nfb > TC_MAX_DIMS)
    return tc_err_set(err, TC_E_BAD_ARG, TC_OP_EINSUM, -1, "an intermediate result would have more than %d dimensions",
                      TC_MAX_DIMS);
  int oa[TC_MAX_DIMS], ob[TC_MAX_DIMS], lr[TC_MAX_DIMS];
  int na = 0, nb = 0, n = 0;
  for (int x = 0; x < p->nb; x++) oa[na++] = ob[nb++] = lr[n++] = p->b[x];
  for (int x = 0; x < p->nfa; x++) oa[na++] = lr[n++] = p->fa[x];
  for (int x = 0; x < p->nk; x++) oa[na++] = ob[nb++] = p->k[x];
  for (int x = 0; x < p->nfb; x++) ob[nb++] = lr[n++] = p->fb[x];
  int64_t B = prod(p->b, p->nb, gsize), M = prod(p->fa, p->nfa, gsize), K = prod(p->k, p->nk, gsize),
          N = prod(p->fb, p->nfb, gsize);
  int64_t sa[3] = {B, M, K}, sb[3] = {B, K, N}, rs[TC_MAX_DIMS];
  for (int x = 0; x < n; x++) rs[x] = gsize[lr[x]];
  tc_tensor *ma = reshaped(arrange(&ops[i], na, oa, gsize, err), 3, sa, err);
  tc_tensor *mb = ma ? reshaped(arrange(&ops[j], nb, ob, gsize, err), 3, sb, err) : NULL;
  tc_tensor *m = mb ? tc_matmul(ma, mb, err) : NULL;
  tc_tensor_free(ma);
  tc_tensor_free(mb);
  tc_tensor *r = m ? reshaped(m, n, rs, err) : NULL;
  if (!r) return -1;
  tc_tensor_free(ops[i].t);
  tc_tensor_free(ops[j].t);
  ops[j].t = NULL;
  ops[i].t = r;
  ops[i].n = n;
  memcpy(ops[i].lab, lr, sizeof(int) * (size_t)n);
  return 0;
}

/* Reads the spec into terms and the output, checking it against the operands. */
static int parse(const char *spec, int nops, tc_tensor *const *xs, term *terms, term *out, int *ell_rank,
                 tc_err *err) {
  const char *p = spec;
  int nt = 0, len = (int)strlen(spec);
  bool arrow = false;
  for (;;) {
    if (nt >= MAX_OPS)
      return spec_err(err, TC_E_BAD_ARG, 0, len, "more than 64 operands"), -1;
    if (parse_term(spec, &p, &terms[nt++], false, err) != 0) return -1;
    if (*p == ',') { p++; continue; }
    if (*p == '-') { arrow = true; p += 2; }
    break;
  }
  if (nt != nops) {
    char what[96];
    snprintf(what, sizeof what, "the subscripts name %d operand%s but %d %s given", nt, nt == 1 ? "" : "s", nops,
             nops == 1 ? "is" : "are");
    return spec_err(err, TC_E_BAD_ARG, 0, len, what), -1;
  }
  if (arrow && parse_term(spec, &p, out, true, err) != 0) return -1;
  if (arrow && *p) {
    int at = (int)(p - spec);
    return spec_err(err, TC_E_BAD_ARG, at, at + 1, "the output term ends the subscripts (one \"->\")"), -1;
  }
  *ell_rank = 0;
  for (int i = 0; i < nops; i++) {
    const term *t = &terms[i];
    int nd = xs[i]->ndim;
    if (t->ell < 0 ? nd != t->n : nd < t->n) {
      char what[128];
      snprintf(what, sizeof what, "operand %d has %d dimension%s but its term names %d%s", i + 1, nd,
               nd == 1 ? "" : "s", t->n, t->ell < 0 ? "" : " besides \"...\"");
      return spec_err(err, TC_E_BAD_ARG, t->start, t->end > t->start ? t->end : t->start + 1, what), -1;
    }
    if (t->ell >= 0 && nd - t->n > *ell_rank) *ell_rank = nd - t->n;
  }
  if (!arrow) {   /* implicit: the broadcast dims, then letters used once, in order */
    int count[NLET] = {0};
    memset(out, 0, sizeof *out);
    for (int i = 0; i < nops; i++)
      for (int d = 0; d < terms[i].n; d++) count[terms[i].lab[d]]++;
    out->ell = 0;
    for (int l = 0; l < NLET; l++)
      if (count[l] == 1) out->lab[out->n++] = l;
  } else {
    for (int d = 0; d < out->n; d++) {
      bool seen = false;
      for (int i = 0; i < nops && !seen; i++) seen = find(terms[i].lab, terms[i].n, out->lab[d]) >= 0;
      if (!seen) {
        char what[80];
        snprintf(what, sizeof what, "output letter '%c' appears in no operand", label_char(out->lab[d]));
        return spec_err(err, TC_E_BAD_ARG, out->pos[d], out->pos[d] + 1, what), -1;
      }
    }
  }
  if (out->ell < 0 && *ell_rank > 0)
    return spec_err(err, TC_E_BAD_ARG, out->start, out->end > out->start ? out->end : out->start + 1,
                    "the operands have broadcast dimensions (\"...\") but the output does not name them"), -1;
  /* the output's labels, broadcast dims expanded */
  int lab[NLAB], pos[NLAB];
  dim_labels(out, out->ell >= 0 ? *ell_rank : 0, *ell_rank, lab, pos);
  int n = out->n + (out->ell >= 0 ? *ell_rank : 0);
  if (n > TC_MAX_DIMS)
    return spec_err(err, TC_E_BAD_ARG, out->start, out->end, "the result would have more than 16 dimensions"), -1;
  out->n = n;
  memcpy(out->lab, lab, sizeof lab);
  return 0;
}

/* The size of every label; letters must agree, broadcast dims broadcast. */
static int label_sizes(int nops, tc_tensor *const *xs, const term *terms, int ell_rank, int64_t *gsize, tc_err *err) {
  int where[NLAB];
  for (int l = 0; l < NLAB; l++) gsize[l] = -1;
  for (int i = 0; i < nops; i++) {
    int lab[TC_MAX_DIMS], pos[TC_MAX_DIMS];
    dim_labels(&terms[i], xs[i]->ndim - terms[i].n, ell_rank, lab, pos);
    for (int d = 0; d < xs[i]->ndim; d++) {
      int l = lab[d], first = find(lab, d, l);
      int64_t s = xs[i]->shape[d];
      /* a letter repeated in one operand (a diagonal) needs one size; across
       * operands a size of 1 broadcasts, as in NumPy */
      bool same_op = first >= 0 && xs[i]->shape[first] != s;
      if (!same_op && (gsize[l] < 0 || gsize[l] == 1)) { gsize[l] = s; where[l] = i; continue; }
      if (!same_op && (gsize[l] == s || s == 1)) continue;
      char what[160];
      if (same_op)
        snprintf(what, sizeof what, "'%c' has sizes %%lld and %%lld in operand %d", label_char(l), i + 1);
      else if (l < NLET)
        snprintf(what, sizeof what, "'%c' has size %%lld in operand %d and %%lld in operand %d", label_char(l),
                 where[l] + 1, i + 1);
      else
        snprintf(what, sizeof what, "the \"...\" dims of operand %d do not broadcast with operand %d (sizes %%lld and %%lld)",
                 where[l] + 1, i + 1);
      char msg[200];
      snprintf(msg, sizeof msg, what, (long long)(same_op ? xs[i]->shape[first] : gsize[l]), (long long)s);
      tc_err_set(err, TC_E_SHAPE, TC_OP_EINSUM, -1, "%s", msg);
      err->start = pos[d];
      err->end = pos[d] + (l < NLET ? 1 : 3);
      return -1;
    }
  }
  return 0;
}

/* The compute dtype: the strong operands' (all, when every one is weak). */
static int compute_dtype(int nops, tc_tensor *const *xs, tc_dtype *dt, tc_err *err) {
  bool any_strong = false;
  *dt = TC_DT_BOOL;
  for (int i = 0; i < nops; i++) any_strong |= !xs[i]->weak;
  for (int i = 0; i < nops; i++)
    if ((!any_strong || !xs[i]->weak) && tc_promote_err(*dt, xs[i]->dtype, TC_OP_EINSUM, dt, err) != 0) return -1;
  return tc_check_supported(TC_OP_EINSUM, *dt, err);
}

/* Operand o: x cast to k, then viewed with repeated labels as a diagonal. */
static int take_operand(opnd *o, tc_tensor *x, const term *t, int ell_rank, tc_dtype k, tc_err *err) {
  int lab[TC_MAX_DIMS], pos[TC_MAX_DIMS];
  dim_labels(t, x->ndim - t->n, ell_rank, lab, pos);
  tc_tensor *c = tc_cast(x, k, err);
  if (!c) return -1;
  int64_t shape[TC_MAX_DIMS], strides[TC_MAX_DIMS];
  for (int d = 0; d < c->ndim; d++) {
    int u = find(o->lab, o->n, lab[d]);
    if (u >= 0) { strides[u] += c->strides[d]; continue; }
    o->lab[o->n] = lab[d];
    shape[o->n] = c->shape[d];
    strides[o->n++] = c->strides[d];
  }
  o->t = tc_view(c, o->n, shape, strides, c->offset, err);
  tc_tensor_free(c);
  return o->t ? 0 : -1;
}

/* check / saturate (SPEC 13): when an output could leave the dtype, the
 * exact sums of products (src/overflow.c): 1 with *r set, or -1. Else 0,
 * with the policy set to wrap for the lowering, which is then exact. */
static int exact_if_needed(tc_dtype k, int nops, const opnd *ops, const int64_t *gsize, const term *out, tc_tensor **r,
                           tc_err *err) {
  if (!tc_overflow_judges_einsum(k)) return 0;
  int sumlab[NLAB], nsum = 0;
  for (int l = 0; l < NLAB; l++) {
    bool used = false;
    for (int i = 0; i < nops && !used; i++) used = find(ops[i].lab, ops[i].n, l) >= 0;
    if (used && find(out->lab, out->n, l) < 0) sumlab[nsum++] = l;
  }
  if (tc_overflow_einsum_fits(k, nops, ops, gsize, nsum, sumlab)) {
    tc_set_overflow(TC_OVERFLOW_WRAP);
    return 0;
  }
  *r = tc_overflow_einsum(k, nops, ops, gsize, out->n, out->lab, nsum, sumlab, err);
  return *r ? 1 : -1;
}

/* Sums private labels, then contracts the pair with the smallest result
 * until one operand is left. */
static int contract_all(opnd *ops, int nops, const term *out, const int64_t *gsize, tc_err *err) {
  int rc = 0, live = nops;
  for (int i = 0; i < nops && rc == 0; i++) rc = sum_private(ops, nops, i, out, err);
  while (rc == 0 && live > 1) {
    int bi = -1, bj = -1;
    double best = 0;
    plan p, bp;
    for (int i = 0; i < nops; i++)
      for (int j = i + 1; j < nops; j++) {
        if (!ops[i].t || !ops[j].t) continue;
        double s = plan_pair(ops, nops, i, j, out, gsize, &p);
        if (bi < 0 || s < best) { best = s; bi = i; bj = j; bp = p; }
      }
    rc = contract(ops, bi, bj, &bp, gsize, err);
    live--;
    if (rc == 0) rc = sum_private(ops, nops, bi, out, err);
  }
  return rc;
}

/* The one operand left, in the output's label order; bool as (sum != 0). */
static tc_tensor *result_of(const opnd *ops, const term *out, const int64_t *gsize, tc_dtype dt, tc_err *err) {
  const opnd *o = &ops[0];
  while (!o->t) o++;
  tc_tensor *r = arrange(o, out->n, out->lab, gsize, err);
  if (r && dt == TC_DT_BOOL) {
    tc_tensor *z = tc_scalar_i64(0, true, err);
    tc_tensor *b = z ? tc_binary(TC_OP_NOT_EQUAL, r, z, err) : NULL;
    tc_tensor_free(z);
    tc_tensor_free(r);
    r = b;
  }
  return r;
}

tc_tensor *tc_einsum(const char *spec, int nops, tc_tensor *const *xs, tc_err *err) {
  const tc_op op = TC_OP_EINSUM;
  static term terms[MAX_OPS];   /* (not reentrant: the evaluator is single-threaded) */
  term out;
  int ell_rank = 0;
  int64_t gsize[NLAB];
  tc_dtype dt;
  if (parse(spec, nops, xs, terms, &out, &ell_rank, err) != 0 || label_sizes(nops, xs, terms, ell_rank, gsize, err) != 0 ||
      compute_dtype(nops, xs, &dt, err) != 0)
    return NULL;
  tc_dtype k = dt == TC_DT_BOOL ? TC_DT_I64 : dt;
  opnd ops[MAX_OPS];
  memset(ops, 0, sizeof ops);
  int rc = 0;
  for (int i = 0; i < nops && rc == 0; i++) rc = take_operand(&ops[i], xs[i], &terms[i], ell_rank, k, err);
  tc_overflow policy = tc_get_overflow();
  tc_tensor *r = NULL;
  if (rc == 0 && tc_dtype_class(dt) == TC_CLASS_INT) rc = exact_if_needed(k, nops, ops, gsize, &out, &r, err);
  if (rc == 0) rc = contract_all(ops, nops, &out, gsize, err);
  tc_set_overflow(policy);
  if (rc == 0) r = result_of(ops, &out, gsize, dt, err);
  if (r) r->weak = false;
  for (int i = 0; i < nops; i++) tc_tensor_free(ops[i].t);
  if (!r && err->op < 0) err->op = (int)op;
  else if (!r) tc_reattribute(err, op);
  return r;
}
