/* Selection (src/engine.h: a sort call with kth positions, which the CPU
 * answers by quickselect in backend/cpu/order.c): every asked position of
 * every row holds the bits the full stable sort puts there, for sort and
 * argsort, ascending and descending, every dtype, rows with ties, NaN and
 * signed zeros, asked positions at the ends, in the middle and as a prefix,
 * at 1 and 3 threads; the other positions hold elements of the row. Long
 * rows are first narrowed by a sample (order.c); a narrow margin makes the
 * sample miss, and the rows it misses go to the plain selection. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu.h"
#include "engine.h"
#include "internal.h"
#include "tt.h"

static void setup(void) { tc_set_threads(0); }
TestSuite(select, .init = setup, .fini = setup);

static tc_tensor *sorted(tc_tensor *x, tc_op op, bool desc, const int64_t *kth, int64_t nkth) {
  tc_err err = tt_err();
  tc_tensor *o = tc_tensor_new(op == TC_OP_ARGSORT ? TC_DT_I64 : x->dtype, x->ndim, x->shape, &err);
  cr_assert_not_null(o, "%s", tt_msg(&err));
  tc_call c = {.kind = TC_CALL_SORT, .op = op, .dtype = x->dtype, .nin = 1, .in = {x}, .out = o,
               .descending = desc, .kth = kth, .nkth = nkth};
  cr_assert_eq(tc_run_call(&c, &err), 0, "%s", tt_msg(&err));
  return o;
}

Test(select, asked_positions_hold_the_stable_sort) {
  const int64_t lens[] = {1, 2, 5, 17, 18, 33, 100, 1000, 20011};
  uint64_t st = 41;
  int checked = 0;
  for (int dt = 0; dt < TT_NDT; dt++) {
    size_t es = tc_dtype_size((tc_dtype)dt);
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
      int64_t n = lens[li], rows = n < 100 ? 7 : 2, shape[2] = {rows, n};
      double *fv = malloc(sizeof(double) * (size_t)(rows * n));
      int64_t *iv = malloc(sizeof(int64_t) * (size_t)(rows * n)), *kth = malloc(sizeof(int64_t) * (size_t)n);
      for (int64_t i = 0; i < rows * n; i++) {
        uint64_t r = tt_rand(&st);
        fv[i] = r % 11 == 0 ? NAN : r % 11 == 1 ? -0.0 : r % 11 == 2 ? 0.0 : (double)((int64_t)(r >> 40) % 9) - 4;
        if (r % 5 == 3) fv[i] = (double)((int64_t)(r >> 20) % 100000) / 7 - 5000;
        iv[i] = (int64_t)(r >> 33) % (r % 3 ? 5 : 300) - (tt_is_flt((tc_dtype)dt) ? 0 : 2);
      }
      tc_tensor *x = tt_tensor((tc_dtype)dt, 2, shape, iv, fv);
      for (int set = 0; set < 4; set++) {
        int64_t nk = 0;
        for (int64_t p = 0; p < n; p++) {
          bool want = set == 0 ? (p == 0 || p == n - 1 || p == (n - 1) / 2 || p == n / 2)
                    : set == 1 ? p < 3
                    : set == 2 ? (tt_rand(&st) % 7 == 0)
                               : (p == n - 1 || p == n / 3);
          if (want) kth[nk++] = p;
        }
        if (nk == 0) continue;
        for (int v = 0; v < 4; v++) {
          tc_op op = v & 1 ? TC_OP_ARGSORT : TC_OP_SORT;
          bool desc = v & 2;
          tc_set_threads(set % 2 ? 1 : 3);
          tc_tensor *full = sorted(x, op, desc, NULL, 0), *sel = sorted(x, op, desc, kth, nk);
          tc_set_threads(0);
          size_t os = op == TC_OP_ARGSORT ? 8 : es;
          const char *a = tc_tensor_data(full), *b = tc_tensor_data(sel);
          for (int64_t r = 0; r < rows; r++)
            for (int64_t q = 0; q < nk; q++) {
              size_t off = ((size_t)(r * n) + (size_t)kth[q]) * os;
              TT_CHECK(memcmp(a + off, b + off, os) == 0, "%s %s%s n %lld set %d row %lld: position %lld differs",
                       tt_name((tc_dtype)dt), tc_op_name(op), desc ? " descending" : "", (long long)n, set,
                       (long long)r, (long long)kth[q]);
            }
          if (op == TC_OP_ARGSORT) {   /* the rest: positions of the row */
            const int64_t *ix = (const int64_t *)(const void *)tc_tensor_data(sel);
            for (int64_t i = 0; i < rows * n; i++)
              TT_CHECK(ix[i] >= 0 && ix[i] < n, "%s argsort: position %lld out of the row", tt_name((tc_dtype)dt),
                       (long long)ix[i]);
          }
          checked++;
          TT_FREE(full, sel);
        }
      }
      tc_tensor_free(x);
      free(fv);
      free(iv);
      free(kth);
    }
  }
  cr_log_info("%d selections checked", checked);
  cr_assert_gt(checked, 100);
  TT_DONE();
}

/* Sorted and reversed runs and one value repeated: the quickselect's worst
 * inputs for a naive pivot still settle (and agree with the sort). */
Test(select, ordered_and_constant_rows) {
  const int64_t n = 50001;
  double *v = malloc(sizeof(double) * (size_t)n);
  int64_t kth[3] = {0, n / 2, n - 1};
  for (int k = 0; k < 3; k++) {
    for (int64_t i = 0; i < n; i++) v[i] = k == 0 ? (double)i : k == 1 ? (double)(n - i) : 3.0;
    tc_tensor *x = tt_tensor(TC_DT_F64, 1, &n, NULL, v);
    tc_tensor *full = sorted(x, TC_OP_ARGSORT, false, NULL, 0), *sel = sorted(x, TC_OP_ARGSORT, false, kth, 3);
    const int64_t *a = (const int64_t *)(const void *)tc_tensor_data(full), *b = (const int64_t *)(const void *)tc_tensor_data(sel);
    for (int q = 0; q < 3; q++)
      cr_expect_eq(a[kth[q]], b[kth[q]], "run %d position %lld: %lld, the sort %lld", k, (long long)kth[q],
                   (long long)b[kth[q]], (long long)a[kth[q]]);
    TT_FREE(x, full, sel);
  }
  free(v);
}

/* Rows of 512 or more, narrowed by a sample: with the default margin and with one so
 * narrow that many brackets miss (those rows then take the plain path),
 * every asked position holds the stable sort's bits. One row of 70001 is
 * scanned across threads. Rows sorted or constant, and rows of few values
 * (every key tied across the bracket), are among them. */
Test(select, sampled_rows_and_their_fallback) {
  const int64_t lens[] = {600, 5003, 20011, 70001};
  uint64_t st = 7;
  int64_t counts[2][2] = {{0, 0}, {0, 0}}, got[2];
  cpu_select_margin(0, NULL);
  for (int dt = 0; dt < TT_NDT; dt++) {
    size_t es = tc_dtype_size((tc_dtype)dt);
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
      int64_t n = lens[li], rows = n > 50000 ? 1 : 3, shape[2] = {rows, n};
      double *fv = malloc(sizeof(double) * (size_t)(rows * n));
      int64_t *iv = malloc(sizeof(int64_t) * (size_t)(rows * n));
      for (int64_t i = 0; i < rows * n; i++) {
        uint64_t r = tt_rand(&st);
        int kind = (int)((i / n + li + (size_t)dt) % 4);   /* a row's kind */
        fv[i] = kind == 0 ? (r % 13 == 0 ? NAN : r % 13 == 1 ? -0.0 : (double)((int64_t)(r >> 24) % 200001) / 8 - 12500)
              : kind == 1 ? (double)(i % n) - 1000 : kind == 2 ? 1.5 : (double)(r % 3) - (r % 29 == 0 ? 0.0 : 1.0);
        iv[i] = kind == 0 ? (int64_t)(r >> 33) % 70001 - 35000 : kind == 1 ? i % n : kind == 2 ? 1 : (int64_t)(r % 3);
      }
      tc_tensor *x = tt_tensor((tc_dtype)dt, 2, shape, iv, fv);
      int64_t q90 = 9 * (n - 1) / 10;
      const int64_t sets[4][4] = {{0, 1, 2, 9}, {(n - 1) / 2, n / 2, n - 1, -1}, {q90, q90 + 1, n - 1, -1},
                                  {n / 5, n / 3, n - 2, -1}};
      for (int v = 0; v < 4; v++) {
        tc_op op = v & 1 ? TC_OP_ARGSORT : TC_OP_SORT;
        bool desc = v & 2;
        size_t os = op == TC_OP_ARGSORT ? 8 : es;
        tc_tensor *full = sorted(x, op, desc, NULL, 0);
        for (int set = 0; set < 4; set++)
          for (int narrow = 0; narrow < 2; narrow++) {
            int64_t nk = 0;
            while (nk < 4 && sets[set][nk] >= 0) nk++;
            cpu_select_margin(narrow ? 1 : 0, NULL);
            tc_set_threads(set % 2 ? 1 : 3);
            tc_tensor *sel = sorted(x, op, desc, sets[set], nk);
            tc_set_threads(0);
            cpu_select_margin(0, got);
            counts[narrow][0] += got[0];
            counts[narrow][1] += got[1];
            const char *a = tc_tensor_data(full), *b = tc_tensor_data(sel);
            for (int64_t r = 0; r < rows; r++)
              for (int64_t q = 0; q < nk; q++) {
                size_t off = ((size_t)(r * n) + (size_t)sets[set][q]) * os;
                TT_CHECK(memcmp(a + off, b + off, os) == 0, "%s %s%s n %lld set %d margin %s row %lld: position %lld differs",
                         tt_name((tc_dtype)dt), tc_op_name(op), desc ? " descending" : "", (long long)n, set,
                         narrow ? "narrow" : "default", (long long)r, (long long)sets[set][q]);
              }
            if (op == TC_OP_ARGSORT) {
              const int64_t *ix = (const int64_t *)(const void *)b;
              for (int64_t i = 0; i < rows * n; i++)
                TT_CHECK(ix[i] >= 0 && ix[i] < n, "%s argsort: position %lld out of the row", tt_name((tc_dtype)dt),
                         (long long)ix[i]);
            }
            tc_tensor_free(sel);
          }
        tc_tensor_free(full);
      }
      tc_tensor_free(x);
      free(fv);
      free(iv);
    }
  }
  cr_log_info("rows settled / handed back: default margin %lld / %lld, narrow %lld / %lld", (long long)counts[0][0],
              (long long)counts[0][1], (long long)counts[1][0], (long long)counts[1][1]);
  cr_expect_gt(counts[0][0], 500, "the sample settles most long rows");
  cr_expect_lt(counts[0][1] * 20, counts[0][0], "the default margin seldom misses");
  cr_expect_gt(counts[1][1], 50, "a narrow margin misses, and the plain path answers");
  TT_DONE();
}

/* The sort itself against a reference stable sort (qsort on (key,
 * position)): NaN the largest, -0.0 equal to 0.0, equal keys in input order
 * in both directions. Rows of every dtype with values of both signs in a
 * small range (the keys rebased on the least, one counted digit), a wide
 * range, and NaN and zeros, floats of many exponents with clusters a few
 * ulps apart, short and long (across SMALL_ROW, 2^17, where the row is
 * split across threads), ascending and descending. Rows of up to
 * CPU_VSORT_MAX elements are sorted at every instruction-set level the CPU
 * has (AVX-512 sorts them in vsort.c, packed into 32- or 64-bit keys). */
typedef struct { double k; int64_t i; int nan; } ref_el;
static bool ref_desc;
static int ref_cmp(const void *a_, const void *b_) {
  const ref_el *a = a_, *b = b_;
  int c = a->nan != b->nan ? (a->nan ? 1 : -1) : a->nan || a->k == b->k ? 0 : a->k < b->k ? -1 : 1;
  if (ref_desc) c = -c;
  return c ? c : a->i < b->i ? -1 : 1;
}

Test(select, sort_matches_a_reference_stable_sort) {
  const int64_t lens[] = {33, 1000, CPU_VSORT_MAX, 5000, 100003, 140001};
  uint64_t st = 3;
  int checked = 0, top = cpu_matmul_isa(-1);
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (int kind = 0; kind < 4; kind++)
      for (int dt = 0; dt < TT_NDT; dt++) {
        int64_t n = lens[li];
        if ((n > 100000 && (kind != 0 || tt_sampled())) || (n > 20000 && kind % 2)) continue;   /* the time under valgrind */
        double *fv = malloc(sizeof(double) * (size_t)n), *xv = malloc(sizeof(double) * (size_t)n);
        int64_t *iv = malloc(sizeof(int64_t) * (size_t)n);
        ref_el *ref = malloc(sizeof(ref_el) * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
          uint64_t r = tt_rand(&st);
          iv[i] = kind == 0 ? (int64_t)(r % 201) - 100 : kind % 2 ? (int64_t)(r >> 12) - (int64_t)(1ull << 51) : (int64_t)(r % 5) - 2;
          fv[i] = kind == 2   ? (r % 7 == 0 ? NAN : r % 7 == 1 ? -0.0 : (double)iv[i])
                  : kind == 3 ? (r % 11 == 0 ? 1 + ldexp((double)(r % 5), -52)
                                             : ldexp((double)(r >> 11) / 9007199254740992.0, (int)(r % 120) - 60) *
                                                   (r & 1 ? -1 : 1))
                              : (double)iv[i] / (kind ? 1e9 : 4);
        }
        tc_tensor *x = tt_tensor((tc_dtype)dt, 1, &n, iv, fv);
        tt_read(x, iv, xv);   /* as stored: integers in iv, floats in xv */
        if (!tt_is_flt((tc_dtype)dt))
          for (int64_t i = 0; i < n; i++) xv[i] = (double)iv[i];   /* exact for the keys compared here */
        size_t es = tc_dtype_size((tc_dtype)dt);
        for (int v = 0; v < 4; v++) {
          tc_op op = v & 1 ? TC_OP_ARGSORT : TC_OP_SORT;
          ref_desc = v & 2;
          for (int64_t i = 0; i < n; i++) ref[i] = (ref_el){xv[i] == 0 ? 0.0 : xv[i], i, isnan(xv[i])};
          qsort(ref, (size_t)n, sizeof *ref, ref_cmp);
          for (int level = n <= CPU_VSORT_MAX ? 0 : top; level <= top; level++) {
            cpu_matmul_isa(level);
            tc_tensor *s = sorted(x, op, ref_desc, NULL, 0);
            cpu_matmul_isa(99);
            const char *sb = tc_tensor_data(s), *xb = tc_tensor_data(x);
            int64_t bad = -1;
            for (int64_t i = 0; i < n && bad < 0; i++)
              if (op == TC_OP_ARGSORT ? ((const int64_t *)(const void *)sb)[i] != ref[i].i
                                      : memcmp(sb + (size_t)i * es, xb + (size_t)ref[i].i * es, es) != 0)
                bad = i;
            TT_CHECK(bad < 0, "%s %s%s n %lld kind %d level %d: position %lld differs from the stable sort",
                     tt_name((tc_dtype)dt), tc_op_name(op), ref_desc ? " descending" : "", (long long)n, kind, level,
                     (long long)bad);
            checked++;
            tc_tensor_free(s);
          }
        }
        tc_tensor_free(x);
        free(fv);
        free(xv);
        free(iv);
        free(ref);
      }
  cr_log_info("%d sorts checked", checked);
  TT_DONE();
}
