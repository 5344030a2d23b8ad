/* What the file formats of src/ share (io.c: .npy, CSV, JSON files, safe
 * writing; npz.c: .npz archives); not part of the public API. */
#ifndef TC_IO_INT_H
#define TC_IO_INT_H
#include <stdio.h>
#include "internal.h"

/* An io_error naming the path (shortened, control bytes shown as '?'). */
int tc_io_fail(tc_err *err, tc_op op, int dt, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A regular file opened for reading, and its size; NULL with err set. */
FILE *tc_io_open_read(const char *path, tc_op op, uint64_t *size, tc_err *err);

/* A byte source for the .npy reader: a file, or a member of an archive.
 * read returns n, or fewer with why set to the reason. */
typedef struct tc_rd {
  size_t (*read)(struct tc_rd *r, void *buf, size_t n);
  const char *why;
  FILE *f;
  void *ctx;
} tc_rd;

typedef struct {
  tc_dtype dt;
  bool swap, fortran;
  int ndim;
  int64_t shape[TC_MAX_DIMS];
  uint64_t offset, nbytes;   /* where the data starts, and its size */
} npy_header;

/* Reads and checks a .npy header of a source of size bytes (the data must
 * be exactly the rest). */
int tc_npy_header(tc_rd *r, uint64_t size, const char *path, tc_op op, npy_header *h, tc_err *err);
/* The whole .npy of a source of size bytes, as a C-order tensor. */
tc_tensor *tc_npy_read(tc_rd *r, uint64_t size, const char *path, tc_op op, tc_err *err);
void tc_npy_stored_shape(const npy_header *h, int64_t *shape);
tc_tensor *tc_npy_orient(tc_tensor *t, const npy_header *h, bool copy, tc_op op, tc_err *err);

/* The .npy prefix and header (format 1.0) of x into buf; its length, 0 for bf16. */
#define TC_NPY_HEAD_MAX 640
size_t tc_npy_head(const tc_tensor *x, unsigned char *buf, size_t cap);
/* x's elements in row-major order, little-endian, handed to fn in chunks;
 * fn's nonzero return stops and is returned. */
/* Opens the progress job of a file's reading or writing (src/progress.c),
 * labelled with the verb and the file's name. */
void tc_io_progress(const char *verb, const char *path, int64_t total, tc_progress_unit unit);
/* x's bytes for a job's total (INT64_MAX where they do not fit: a broadcast view). */
static inline int64_t tc_io_bytes(const tc_tensor *x) {
  int64_t b;
  return __builtin_mul_overflow(tc_numel(x), (int64_t)tc_dtype_size(x->dtype), &b) ? INT64_MAX : b;
}
/* The interrupted error of file reading and writing. */
int tc_io_interrupted(tc_err *err, tc_op op, int dt);
int tc_io_chunks(tc_tensor *x, tc_op op, int (*fn)(void *ctx, const unsigned char *p, size_t n), void *ctx,
                 tc_err *err);
int tc_io_fwrite(void *f, const unsigned char *p, size_t n);

/* Safe writing (io.c): a temporary file renamed over the name. */
typedef struct {
  FILE *f;
  const char *path;
  tc_op op;
  bool tmp;   /* writing the temporary file, to be renamed over path */
} tc_writer;
int tc_open_write(tc_writer *w, const char *path, tc_op op, tc_err *err);
/* rc: an earlier failure (the temporary file is removed), else 0. */
int tc_close_write(tc_writer *w, int rc, tc_err *err);
#endif
