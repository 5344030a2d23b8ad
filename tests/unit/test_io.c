/* Files through the core API (src/io.c): .npy round trips for every dtype
 * NumPy shares, hand-made headers (Fortran order, big-endian, versions),
 * one test per class of malformed file, the memory limit, write failures,
 * and CSV. Files live in a fresh temporary directory per test. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "idx_util.h"
#include "tt.h"

static tc_err e;
static char dir[64];
static char pathbuf[128];

static void setup(void) {
  tc_err_clear(&e);
  snprintf(dir, sizeof dir, "/tmp/tcalc-io-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(io, .init = setup, .fini = teardown);

static const char *P(const char *name) {
  snprintf(pathbuf, sizeof pathbuf, "%s/%s", dir, name);
  return pathbuf;
}

static void write_bytes(const char *name, const void *data, size_t n) {
  FILE *f = fopen(P(name), "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, n, f), n);
  fclose(f);
}

/* A .npy file with header dict d and n bytes of data. */
static void write_npy(const char *name, int major, const char *d, const void *data, size_t n) {
  size_t pre = major == 1 ? 10 : 12, hl = strlen(d) + 1;
  unsigned char *buf = malloc(pre + hl + n);
  cr_assert_not_null(buf);
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  buf[8] = (unsigned char)(hl & 0xff);
  buf[9] = (unsigned char)(hl >> 8);
  if (major > 1) buf[10] = buf[11] = 0;
  memcpy(buf + pre, d, hl - 1);
  buf[pre + hl - 1] = '\n';
  memcpy(buf + pre + hl, data, n);
  write_bytes(name, buf, pre + hl + n);
  free(buf);
}

static void expect_io(tc_tensor *r, const char *what) {
  cr_assert_null(r, "%s: loaded", what);
  cr_assert_eq(e.code, TC_E_IO, "%s: %s %s", what, tc_code_name(e.code), tt_msg(&e));
  cr_assert(strstr(tt_msg(&e), what), "the message names the reason: %s", tt_msg(&e));
  cr_assert(strstr(tt_msg(&e), dir), "the message names the path: %s", tt_msg(&e));
  tc_err_clear(&e);
}

Test(io, npy_round_trip_every_dtype) {
  for (int d = 0; d < TC_DT_COUNT; d++) {
    tc_dtype dt = (tc_dtype)d;
    tc_tensor *x = t_as(t_f64(2, (int64_t[]){2, 3}, (double[]){-1, 0, 1, 2, 3, 100}), dt);
    tc_axes all = {.all = true};
    tc_tensor *f = tc_flip(x, &all, &e);
    int rc = tc_save_npy(P("x.npy"), f, &e);
    if (dt == TC_DT_BF16) {
      cr_assert_eq(rc, -1);
      cr_assert_eq(e.code, TC_E_DTYPE, "%s", tt_msg(&e));
      cr_assert(strstr(tt_msg(&e), "f32"), "suggests a cast: %s", tt_msg(&e));
      tc_err_clear(&e);
      struct stat st;
      cr_assert_neq(stat(P("x.npy"), &st), 0, "no file is left behind");
    } else {
      cr_assert_eq(rc, 0, "%s: %s", tc_dtype_name(dt), tt_msg(&e));
      tc_tensor *y = tc_load_npy(P("x.npy"), &e);
      cr_assert_not_null(y, "%s", tt_msg(&e));
      cr_assert_eq(y->dtype, dt);
      double *a = vals_f64(f), *b = vals_f64(y);
      for (int i = 0; i < 6; i++) cr_assert_eq(a[i], b[i], "%s element %d", tc_dtype_name(dt), i);
      free(a);
      free(b);
      tc_tensor_free(y);
      remove(P("x.npy"));
    }
    tc_tensor_free(f);
    tc_tensor_free(x);
  }
}

Test(io, npy_header_is_numpys) {
  tc_tensor *x = T_F64(1, 2, 3);
  cr_assert_eq(tc_save_npy(P("h.npy"), x, &e), 0);
  FILE *f = fopen(P("h.npy"), "rb");
  unsigned char buf[128];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  cr_assert_eq(n, 128);
  cr_assert_eq(memcmp(buf, "\x93NUMPY\x01\x00", 8), 0);
  size_t hl = buf[8] | (size_t)buf[9] << 8;
  cr_assert_eq((10 + hl) % 64, 0, "data is 64-byte aligned");
  cr_assert_eq(memcmp(buf + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 57), 0);
  cr_assert_eq(buf[10 + hl - 1], '\n');
  tc_tensor_free(x);
}

Test(io, fortran_big_endian_and_versions) {
  /* [[1, 2, 3], [4, 5, 6]] stored column by column, big-endian i32 */
  unsigned char be[24] = {0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 6};
  write_npy("f.npy", 1, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }", be, sizeof be);
  tc_tensor *t = tc_load_npy(P("f.npy"), &e);
  cr_assert_eq(t->dtype, TC_DT_I32);
  EXPECT_I64(t, SHAPE(2, 3), 1, 2, 3, 4, 5, 6);
  tc_tensor_free(t);
  double v[2] = {0.5, -8};
  write_npy("v2.npy", 2, "{'shape':(2,),'fortran_order':False,'descr':'<f8'}", v, sizeof v);
  write_npy("v3.npy", 3, "{\"descr\": \"=f8\", \"fortran_order\": False, \"shape\": (2L,)}", v, sizeof v);
  tc_tensor *a = tc_load_npy(P("v2.npy"), &e), *b = tc_load_npy(P("v3.npy"), &e);
  EXPECT_F64(a, SHAPE(2), 0.5, -8);
  EXPECT_F64(b, SHAPE(2), 0.5, -8);
  unsigned char bools[3] = {0, 2, 255};
  write_npy("b.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bools, 3);
  tc_tensor *bl = tc_load_npy(P("b.npy"), &e);
  EXPECT_I64(bl, SHAPE(3), 0, 1, 1);
  TT_FREE(bl, b, a);
}

Test(io, every_malformed_class_is_an_io_error) {
  double v[3] = {1, 2, 3};
  const char *ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  write_bytes("empty.npy", "", 0);
  expect_io(tc_load_npy(P("empty.npy"), &e), "too short");
  write_npy("magic.npy", 1, ok, v, sizeof v);
  FILE *f = fopen(P("magic.npy"), "r+b");
  fputc('X', f);
  fclose(f);
  expect_io(tc_load_npy(P("magic.npy"), &e), "bad magic");
  write_npy("ver.npy", 9, ok, v, sizeof v);
  expect_io(tc_load_npy(P("ver.npy"), &e), "version 9.0");
  write_npy("trunc.npy", 1, ok, v, 20);
  expect_io(tc_load_npy(P("trunc.npy"), &e), "truncated data");
  unsigned char lie[16] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0xff, '{', '}'};
  write_bytes("lie.npy", lie, 12);
  expect_io(tc_load_npy(P("lie.npy"), &e), "truncated header");
  /* a header with a fault, the data bytes written after it, the message */
  static const struct { const char *header; size_t bytes; const char *want; } bad[] = {
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", sizeof v, "bytes after the data"},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8, "too large"},
    {"{'descr': '<i8', 'fortran_order': False, 'shape': (100000000000,), }", 8, "truncated data"},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }", sizeof v, "negative"},
    {"{'descr': '<u16', 'fortran_order': False, 'shape': (3,), }", 12, "unsupported dtype"},
    {"{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", 12, "complex"},
    {"{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", sizeof v, "unsupported dtype"},
    {"{'descr': '<f8', 'shape': (3,), }", sizeof v, "lacks 'fortran_order'"},
    {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } junk", sizeof v, "after the header"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_npy("bad.npy", 1, bad[i].header, v, bad[i].bytes);
    expect_io(tc_load_npy(P("bad.npy"), &e), bad[i].want);
  }
  expect_io(tc_load_npy(P("missing.npy"), &e), "No such file");
  expect_io(tc_load_npy(dir, &e), "directory");
}

Test(io, memory_limit_is_checked_before_reading) {
  static double big[4096];
  write_npy("big.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4096,), }", big, sizeof big);
  uint64_t old = tc_get_max_memory();
  tc_set_max_memory(tc_mem_in_use() + 1024);
  tc_tensor *t = tc_load_npy(P("big.npy"), &e);
  tc_set_max_memory(old);
  expect_err(t, &e, TC_E_OOM);
  t = tc_load_npy(P("big.npy"), &e);
  cr_assert_not_null(t, "%s", tt_msg(&e));
  tc_tensor_free(t);
}

Test(io, write_failures) {
  tc_tensor *x = T_F64(1, 2, 3);
  int rc = tc_save_npy("/dev/full", x, &e);
  cr_assert_eq(rc, -1);
  cr_assert_eq(e.code, TC_E_IO, "%s", tt_msg(&e));
  cr_assert(strstr(tt_msg(&e), "write failed"), "%s", tt_msg(&e));
  tc_err_clear(&e);
  struct stat st;
  cr_assert_eq(stat("/dev/full", &st), 0, "a device is never removed");
  cr_assert_eq(tc_save_csv("/dev/full", x, &e), -1);
  cr_assert_eq(e.code, TC_E_IO);
  tc_err_clear(&e);
  cr_assert_eq(tc_save_npy(P("no/such/dir.npy"), x, &e), -1);
  cr_assert_eq(e.code, TC_E_IO);
  tc_tensor_free(x);
}

Test(io, csv_round_trips_and_shapes) {
  tc_tensor *f = t_as(T_F64(0.1, -0.0, 1e-45, 3.4e38), TC_DT_F32);
  cr_assert_eq(tc_save_csv(P("f.csv"), f, &e), 0);
  FILE *fp = fopen(P("f.csv"), "r");
  char text[128] = {0};
  cr_assert_gt(fread(text, 1, sizeof text - 1, fp), 0);
  fclose(fp);
  cr_assert_str_eq(text, "0.1\n-0\n1e-45\n3.4e+38\n", "shortest text for f32");
  tc_tensor *g = tc_load_csv(P("f.csv"), TC_DT_F32, &e);
  double *a = vals_f64(f), *b = vals_f64(g);
  for (int i = 0; i < 4; i++) cr_assert(a[i] == b[i] && signbit(a[i]) == signbit(b[i]), "element %d", i);
  free(a);
  free(b);
  tc_tensor *m = t_i64(2, (int64_t[]){2, 2}, (int64_t[]){INT64_MIN, INT64_MAX, -1, 0});
  cr_assert_eq(tc_save_csv(P("m.csv"), m, &e), 0);
  tc_tensor *m2 = tc_load_csv(P("m.csv"), TC_DT_I64, &e);
  EXPECT_I64(m2, SHAPE(2, 2), INT64_MIN, INT64_MAX, -1, 0);
  tc_tensor *m8 = tc_load_csv(P("m.csv"), TC_DT_I8, &e);
  expect_io(m8, "does not fit i8");
  write_bytes("row.csv", "1, 2 ,3\r\n", 9);
  tc_tensor *row = tc_load_csv(P("row.csv"), TC_DT_F64, &e);
  EXPECT_F64(row, SHAPE(3), 1, 2, 3);
  write_bytes("ragged.csv", "1,2\n3\n", 6);
  expect_io(tc_load_csv(P("ragged.csv"), TC_DT_F64, &e), "line 2 has 1 value");
  write_bytes("nul.csv", "1,\0002\n", 6);
  expect_io(tc_load_csv(P("nul.csv"), TC_DT_F64, &e), "byte 0x00");
  tc_tensor *s = tc_scalar_f64(1, false, &e);
  cr_assert_eq(tc_save_csv(P("s.csv"), s, &e), -1);
  cr_assert_eq(e.code, TC_E_BAD_ARG);
  TT_FREE(s, row, m2, m, g, f);
}

/* Every single-byte corruption and every truncation of a valid file
 * loads or fails with io_error (or out_of_memory), never anything else. */
Test(io, corruptions_never_crash) {
  int64_t s[2] = {3, 2};
  tc_tensor *x = t_as(t_f64(2, s, (double[]){1, 2, 3, 4, 5, 6}), TC_DT_I32);
  cr_assert_eq(tc_save_npy(P("ok.npy"), x, &e), 0);
  FILE *f = fopen(P("ok.npy"), "rb");
  unsigned char good[256];
  size_t n = fread(good, 1, sizeof good, f);
  fclose(f);
  cr_assert_eq(n, 128 + 24);
  const unsigned char subst[] = {0x00, 0xff, '9', '(', ')', ',', ' ', '\'', '-', 'T', '>', '{', '}', 0x93};
  unsigned char bad[256];
  int loaded = 0, failed = 0;
  for (size_t pos = 0; pos < n; pos++) {
    for (size_t k = 0; k <= sizeof subst; k++) {
      memcpy(bad, good, n);
      size_t len = n;
      if (k < sizeof subst) bad[pos] = subst[k];
      else len = pos;   /* truncated at pos */
      write_bytes("bad.npy", bad, len);
      tc_tensor *t = tc_load_npy(P("bad.npy"), &e);
      if (t) { loaded++; tc_tensor_free(t); continue; }
      cr_assert(e.code == TC_E_IO || e.code == TC_E_OOM, "byte %zu = 0x%02x: %s %s", pos, k < sizeof subst ? subst[k] : 0,
                tc_code_name(e.code), tt_msg(&e));
      failed++;
      tc_err_clear(&e);
    }
  }
  cr_assert_gt(failed, 100);
  cr_assert_gt(loaded, 10);
  tc_tensor_free(x);
}

/* Reading and writing look at the interrupt flag between chunks: with the
 * flag up, save, save_csv, load and load_csv stop with `interrupted`, the
 * old file stays as it was and no temporary file is left (issue 20). */
Test(io, interrupt_stops_files) {
  int64_t shape[1] = {(int64_t)3 << 20}, small[1] = {8192};   /* 24 MiB of f64: several chunks */
  tc_tensor *x = tc_zeros(1, shape, TC_DT_F64, &e), *y = tc_zeros(1, small, TC_DT_F64, &e);
  cr_assert(x && y);
  cr_assert_eq(tc_save_npy(P("a.npy"), x, &e), 0);
  /* a CSV longer than the 1 MiB between two looks at the flag */
  FILE *f = fopen(P("a.csv"), "wb");
  cr_assert_not_null(f);
  for (int i = 0; i < 600000; i++) fputs("0\n", f);
  cr_assert_eq(fclose(f), 0);
  struct stat before_npy, before_csv, st;
  cr_assert_eq(stat(P("a.npy"), &before_npy), 0);
  cr_assert_eq(stat(P("a.csv"), &before_csv), 0);
  tc_interrupt_flag = 1;
  cr_expect_neq(tc_save_npy(P("a.npy"), x, &e), 0);
  cr_expect_eq(e.code, TC_E_INTERRUPTED, "save: %s", tt_msg(&e));
  tc_err_clear(&e);
  cr_expect_neq(tc_save_csv(P("a.csv"), y, &e), 0);
  cr_expect_eq(e.code, TC_E_INTERRUPTED, "save_csv: %s", tt_msg(&e));
  tc_err_clear(&e);
  cr_expect_null(tc_load_npy(P("a.npy"), &e));
  cr_expect_eq(e.code, TC_E_INTERRUPTED, "load: %s", tt_msg(&e));
  tc_err_clear(&e);
  cr_expect_null(tc_load_csv(P("a.csv"), TC_DT_F64, &e));
  cr_expect_eq(e.code, TC_E_INTERRUPTED, "load_csv: %s", tt_msg(&e));
  tc_interrupt_clear();
  cr_assert_eq(stat(P("a.npy"), &st), 0);
  cr_expect(st.st_ino == before_npy.st_ino && st.st_size == before_npy.st_size, "a.npy was replaced");
  cr_assert_eq(stat(P("a.csv"), &st), 0);
  cr_expect(st.st_ino == before_csv.st_ino && st.st_size == before_csv.st_size, "a.csv was replaced");
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  for (struct dirent *de; (de = readdir(d));) cr_expect(!strstr(de->d_name, "tcalc-save"), "left: %s", de->d_name);
  closedir(d);
  tc_tensor_free(x);
  tc_tensor_free(y);
}
