/* The printers' stream (repl/print.c): output goes out through one fixed
 * buffer in chunks, and stops at the first failed write or at an
 * interrupt. Each case prints into a stream that records what reaches it
 * and can fail, or raise the interrupt flag, once it has taken some number
 * of bytes, for many such numbers; the text must be a prefix of the whole
 * output, end where the printer says, and the printer must stop within a
 * chunk. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "print.h"
#include "tt.h"

typedef struct {
  char *buf;
  size_t len, cap;
  size_t fail_at;     /* writes reaching past this many bytes fail with ENOSPC (0: none) */
  size_t flag_at;     /* a write reaching past this many bytes raises the interrupt flag (0: none) */
  size_t tried;       /* bytes the printer tried to write after the first failure */
  bool failed;        /* every write fails from the first failure on */
} rec;

static ssize_t rec_write(void *cookie, const char *b, size_t n) {
  rec *r = cookie;
  if (r->failed || (r->fail_at && r->len + n > r->fail_at)) {
    r->tried += r->failed ? n : 0;
    r->failed = true;
    errno = ENOSPC;
    return -1;
  }
  if (r->flag_at && r->len + n > r->flag_at) tc_interrupt_flag = 1;
  if (r->len + n > r->cap) {
    r->cap = (r->len + n) * 2;
    r->buf = realloc(r->buf, r->cap);
    cr_assert(r->buf);
  }
  memcpy(r->buf + r->len, b, n);
  r->len += n;
  return (ssize_t)n;
}

/* A stream buffered as standard output is (4 KiB), over the recorder. */
static FILE *rec_open(rec *r) {
  FILE *f = fopencookie(r, "w", (cookie_io_functions_t){.write = rec_write});
  cr_assert(f);
  setvbuf(f, NULL, _IOFBF, 4096);
  return f;
}

/* Prints v (JSON or text) into a recorder that fails, or raises the
 * interrupt flag, once it has taken fail_at or flag_at bytes; returns the
 * printer's status, the text in r, and the error in err. */
static int print_into(rec *r, const value *v, bool json, size_t fail_at, size_t flag_at, tc_err *err) {
  *r = (rec){.fail_at = fail_at, .flag_at = flag_at};
  FILE *f = rec_open(r);
  print_opts o = {.full = true, .width = 80};
  tc_err_clear(err);
  tc_interrupt_flag = 0;
  int rc = json ? print_json(f, v, err) : print_text(f, v, &o, err);
  fflush(f);
  if (fail_at) cr_assert(ferror(f), "a failed write leaves the stream's error set");
  fclose(f);
  tc_interrupt_flag = 0;
  return rc;
}

/* Bytes a printer may still hand on after the write that fails or finds
 * the interrupt: the rest of its chunk (64 KiB) and the stream's buffer;
 * a JSON line's first chunk is the whole hold (1 MiB). */
#define CHUNK_LATE ((size_t)(64 << 10) + 2 * 4096)
static size_t late(bool json) { return json ? ((size_t)1 << 20) + CHUNK_LATE : CHUNK_LATE; }

/* Values of every length from 1 to 24 characters, so that chunks end at
 * every position of an element's text. */
static value long_tensor(int64_t n) {
  double *v = malloc((size_t)n * sizeof *v);
  cr_assert(v);
  uint64_t s = 12345;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    double m = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    v[i] = i % 7 == 0 ? (double)(i % 1000) : m * pow(10.0, (double)((int)(s % 50) - 25));
  }
  value x = {.kind = V_TENSOR, .t = tt_fvec(TC_DT_F64, n, v)};
  free(v);
  cr_assert(x.t);
  return x;
}

/* A JSON line many chunks long is its elements, each as fmt_float writes
 * it alone, whatever chunk they fall in. */
Test(print, json_line_is_its_elements) {
  int64_t n = 200000;
  value x = long_tensor(n);
  rec r;
  tc_err err;
  cr_assert_eq(print_into(&r, &x, true, 0, 0, &err), 0);
  char *want = malloc((size_t)n * 32 + 100), *w = want;
  cr_assert(want);
  w += sprintf(w, "{\"ok\":true,\"dtype\":\"f64\",\"shape\":[%lld],\"data\":[", (long long)n);
  const double *v = tc_tensor_host_data(x.t);
  for (int64_t i = 0; i < n; i++) {
    if (i) *w++ = ',';
    fmt_float(w, 32, v[i], TC_DT_F64, 0);
    w += strlen(w);
  }
  w += sprintf(w, "]}\n");
  cr_assert(r.len == (size_t)(w - want) && !memcmp(r.buf, want, r.len), "%zu bytes, want %zu", r.len,
            (size_t)(w - want));
  free(want);
  free(r.buf);
  value_free(&x);
}

static void check_write_failures(bool json) {
  value x = long_tensor(200000);
  rec whole, r;
  tc_err err;
  cr_assert_eq(print_into(&whole, &x, json, 0, 0, &err), 0);
  cr_assert(whole.len > 3 << 20, "the output is many chunks (%zu bytes)", whole.len);
  for (size_t at = 1; at < whole.len; at += tt_sampled() ? 400009 : 40009) {
    cr_assert_eq(print_into(&r, &x, json, at, 0, &err), 0, "a write error is the caller's to report (ferror)");
    cr_assert(r.len <= at && (!r.len || !memcmp(r.buf, whole.buf, r.len)), "failing at %zu: not a prefix", at);
    cr_assert(r.tried <= late(json), "failing at %zu: %zu bytes tried after it", at, r.tried);
    free(r.buf);
  }
  free(whole.buf);
  value_free(&x);
}

Test(print, json_stops_at_the_first_failed_write) { check_write_failures(true); }
Test(print, text_stops_at_the_first_failed_write) { check_write_failures(false); }

/* An interrupt found after some of the output went out: the line ends
 * where it stopped, with a newline, within a chunk of the interrupt. */
static void check_interrupts(bool json) {
  value x = long_tensor(200000);
  rec whole, r;
  tc_err err;
  cr_assert_eq(print_into(&whole, &x, json, 0, 0, &err), 0);
  for (size_t at = 1; at + 2 * late(json) < whole.len; at += tt_sampled() ? 400009 : 40009) {
    cr_assert_eq(print_into(&r, &x, json, 0, at, &err), -1, "interrupted at %zu", at);
    cr_assert_eq(err.code, TC_E_INTERRUPTED);
    cr_assert(r.len >= 2 && r.len <= at + late(json) && r.buf[r.len - 1] == '\n' && !memcmp(r.buf, whole.buf, r.len - 1),
              "interrupted at %zu: %zu bytes, not a prefix ended by a newline", at, r.len);
    free(r.buf);
  }
  free(whole.buf);
  value_free(&x);
}

Test(print, json_interrupted_ends_its_partial_line) { check_interrupts(true); }
Test(print, text_interrupted_ends_its_partial_line) { check_interrupts(false); }

/* A JSON line is held until it is done, up to the hold (1 MiB): an
 * interrupt found while it is held leaves no output at all, and a line
 * shorter than the hold goes out whole. */
Test(print, json_line_within_the_hold_goes_out_whole) {
  value big = long_tensor(200000), small = long_tensor(40000);
  rec r = {0};
  tc_err err;
  tc_err_clear(&err);
  FILE *f = rec_open(&r);
  tc_interrupt_flag = 1;   /* found at the first look, when the hold is full */
  int rc = print_json(f, &big, &err);
  fclose(f);
  tc_interrupt_flag = 0;
  cr_assert_eq(rc, -1);
  cr_assert_eq(err.code, TC_E_INTERRUPTED, "%s", tt_msg(&err));
  cr_assert_eq(r.len, 0, "an interrupted held line wrote %zu bytes", r.len);
  free(r.buf);
  r = (rec){.flag_at = 1};   /* an interrupt while it goes out: too late to stop it */
  f = rec_open(&r);
  rc = print_json(f, &small, &err);
  fclose(f);
  tc_interrupt_flag = 0;
  cr_assert_eq(rc, 0);
  cr_assert(r.len > 500000 && r.len < (1 << 20), "%zu bytes", r.len);
  cr_assert(r.buf[r.len - 1] == '\n' && !memchr(r.buf, '\n', r.len - 1));
  free(r.buf);
  value_free(&big);
  value_free(&small);
}

/* fmt_len_bound is an upper bound of the text's length wherever it gives
 * one: every f16 and bf16 pattern, random f32 and f64 patterns. */
Test(print, length_bound_holds) {
  char t[64];
  for (uint32_t b = 0; b < 65536; b++) {
    double h = tt_f16_bits_to_f64((uint16_t)b), g = tt_bf16_bits_to_f64((uint16_t)b);
    fmt_float(t, sizeof t, h, TC_DT_F16, 0);
    int x = (int)(b >> 10 & 0x1f), bound = fmt_len_bound(TC_DT_F16, x);
    cr_assert(!bound || (int)strlen(t) <= bound + (int)(b >> 15), "f16 %s: bound %d", t, bound);
    fmt_float(t, sizeof t, g, TC_DT_BF16, 0);
    x = (int)(b >> 7 & 0xff), bound = fmt_len_bound(TC_DT_BF16, x);
    cr_assert(!bound || (int)strlen(t) <= bound + (int)(b >> 15), "bf16 %s: bound %d", t, bound);
  }
  uint64_t s = 99;
  for (int i = 0; i < 400000; i++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    double d;
    float f;
    uint32_t s32 = (uint32_t)(s >> 32);
    memcpy(&d, &s, 8);
    memcpy(&f, &s32, 4);
    fmt_float(t, sizeof t, d, TC_DT_F64, 0);
    int bound = fmt_len_bound(TC_DT_F64, (int)(s >> 52 & 0x7ff));
    cr_assert(!bound || (int)strlen(t) <= bound + (int)(s >> 63), "f64 %s: bound %d", t, bound);
    fmt_float(t, sizeof t, f, TC_DT_F32, 0);
    bound = fmt_len_bound(TC_DT_F32, (int)(s32 >> 23 & 0xff));
    cr_assert(!bound || (int)strlen(t) <= bound + (int)(s32 >> 31), "f32 %s: bound %d", t, bound);
  }
}
