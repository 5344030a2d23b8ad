/* Files (SPEC 5.7): NumPy .npy (read: format 1.0, 2.0 and 3.0, either byte
 * order, C or Fortran order; write: format 1.0, little-endian, C order) and
 * comma-separated values. A file that cannot be read is an io_error naming
 * the path and the reason. Sizes come from the file itself before anything
 * is allocated, data moves in chunks of at most IO_CHUNK bytes, and the
 * tensor's own allocation is checked against the memory limit. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io_int.h"

#define IO_CHUNK ((size_t)1 << 20)
#define NPY_MAX_HEADER ((uint32_t)1 << 20)
#define CSV_MAX_FIELD 128

int tc_io_fail(tc_err *err, tc_op op, int dt, const char *path, const char *fmt, ...) {
  char reason[240], shown[100];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  size_t n = strlen(path);
  if (n < sizeof shown) snprintf(shown, sizeof shown, "%s", path);
  else snprintf(shown, sizeof shown, "...%s", path + n - (sizeof shown - 4));
  for (char *p = shown; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  return tc_err_set(err, TC_E_IO, (int)op, dt, "'%s': %s", shown, reason);
}

/* Reading and writing look at the interrupt flag between chunks. */
int tc_io_interrupted(tc_err *err, tc_op op, int dt) {
  return tc_err_set(err, TC_E_INTERRUPTED, (int)op, dt, "interrupted; variables and files are unchanged");
}

void tc_io_progress(const char *verb, const char *path, int64_t total, tc_progress_unit unit) {
  char label[64];
  const char *base = strrchr(path, '/');
  base = base && base[1] ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 40) base += n - 40;   /* the end of a long name */
  snprintf(label, sizeof label, "%s %s", verb, base);
  for (char *p = label; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  tc_progress_begin(label, total, unit);
}

static bool host_little(void) {
  uint16_t one = 1;
  unsigned char c;
  memcpy(&c, &one, 1);
  return c == 1;
}

static void byteswap(unsigned char *p, size_t n, size_t esize) {
  for (size_t i = 0; i + esize <= n; i += esize)
    for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
      unsigned char t = p[i + a];
      p[i + a] = p[i + b];
      p[i + b] = t;
    }
}

/* Opens path without blocking (a FIFO with no writer would wait forever),
 * then makes the descriptor blocking again for ordinary reads and writes. */
static FILE *open_file(const char *path, int flags, const char *mode, struct stat *st) {
  int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) return NULL;
  int fl = fcntl(fd, F_GETFL);
  FILE *f = NULL;
  if (fstat(fd, st) == 0 && fl != -1 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0) f = fdopen(fd, mode);
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

static bool parse_header(const char *s, size_t n, npy_header *h, char *why, size_t wn);

/* The size of a .npy stream from its first n bytes, or 0 (not a .npy
 * file, or its header not all there): what a pipe's progress is measured
 * against while it is read. */
static uint64_t npy_sniff(const unsigned char *b, size_t n) {
  if (n < 12 || memcmp(b, "\x93NUMPY", 6) || b[6] < 1 || b[6] > 3) return 0;
  uint64_t prefix = b[6] == 1 ? 10 : 12, hlen = (uint64_t)b[8] | (uint64_t)b[9] << 8, bytes;
  if (prefix == 12) hlen |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
  npy_header h;
  char why[8];
  int64_t numel;
  if (hlen > n - prefix || !parse_header((const char *)b + prefix, (size_t)hlen, &h, why, sizeof why) ||
      !tc_shape_numel(h.ndim, h.shape, &numel) || __builtin_mul_overflow((uint64_t)numel, tc_dtype_size(h.dt), &bytes) ||
      bytes > UINT64_MAX - prefix - hlen)
    return 0;
  return prefix + hlen + bytes;
}

static bool stdin_is_data;
void tc_io_stdin_is_data(bool yes) { stdin_is_data = yes; }

/* A stream that is no regular file (a pipe, a FIFO) read to
 * its end into an anonymous temporary file (at most the memory limit), which the readers can size,
 * seek and map; NULL with err set. Ctrl-C stops a read that waits. */
static FILE *spool(FILE *in, const char *path, tc_op op, uint64_t *size, tc_err *err) {
  /* A FIFO opened before its writer reads as empty: wait for the writer
   * (data, or its close), as cat does, looking at the interrupt flag every
   * 0.1 s, so that Ctrl-C ends the wait whichever thread took the signal. */
  struct pollfd pf = {.fd = fileno(in), .events = POLLIN};
  int pr;
  while ((pr = poll(&pf, 1, 100)) == 0 || (pr < 0 && errno == EINTR))
    if (tc_interrupt_flag) {
      tc_err_set(err, TC_E_INTERRUPTED, (int)op, -1, "%s", "interrupted while waiting for a writer; variables are unchanged");
      return NULL;
    }
  FILE *t = tmpfile();
  if (!t) { tc_io_fail(err, op, -1, path, "cannot make a temporary file to read it into: %s", strerror(errno)); return NULL; }
  unsigned char buf[65536];
  uint64_t n = 0;
  for (;;) {
    size_t got = fread(buf, 1, sizeof buf, in);
    if (got && fwrite(buf, 1, got, t) != got) {
      tc_io_fail(err, op, -1, path, "cannot write the temporary file: %s", strerror(errno));
      break;
    }
    if (n == 0 && op == TC_OP_LOAD) tc_progress_total((int64_t)npy_sniff(buf, got));
    tc_progress_add((int64_t)got);
    n += got;
    if (n > tc_get_max_memory()) {   /* an endless writer */
      tc_err_set(err, TC_E_OOM, (int)op, -1, "%s", "more than the memory limit (:set max_memory) came from the pipe");
      break;
    }
    if (tc_interrupt_flag) { tc_err_set(err, TC_E_INTERRUPTED, (int)op, -1, "interrupted; variables are unchanged"); break; }
    if (got < sizeof buf) {
      if (feof(in)) {
        if (fflush(t) == 0 && fseek(t, 0, SEEK_SET) == 0) { *size = n; return t; }
        tc_io_fail(err, op, -1, path, "cannot read the temporary file back: %s", strerror(errno));
        break;
      }
      if (ferror(in) && errno != EINTR && errno != EAGAIN) { tc_io_fail(err, op, -1, path, "cannot read: %s", strerror(errno)); break; }
      clearerr(in);
    }
  }
  fclose(t);
  return NULL;
}

/* Opens a file for reading and gets its size: a regular file as it is,
 * a pipe or FIFO (and "-", standard input, where the statements
 * come from elsewhere) read whole first (spool). */
FILE *tc_io_open_read(const char *path, tc_op op, uint64_t *size, tc_err *err) {
  struct stat st;
  FILE *f = NULL;
  if (!strcmp(path, "-")) {
    if (!stdin_is_data) {
      tc_io_fail(err, op, -1, path, "%s", "standard input holds the statements: \"-\" reads it only when they come from -e or a file");
      return NULL;
    }
    int fd = dup(STDIN_FILENO);
    if (fd >= 0 && fstat(fd, &st) == 0) f = fdopen(fd, "rb");
    else if (fd >= 0) close(fd);
  } else f = open_file(path, O_RDONLY, "rb", &st);
  if (!f) { tc_io_fail(err, op, -1, path, "cannot open: %s", strerror(errno)); return NULL; }
  if (S_ISDIR(st.st_mode)) {
    tc_io_fail(err, op, -1, path, "%s", "is a directory");
    fclose(f);
    return NULL;
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
    tc_io_fail(err, op, -1, path, "%s", "is not a regular file, pipe or FIFO");
    fclose(f);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    FILE *t = spool(f, path, op, size, err);
    fclose(f);
    return t;
  }
  *size = (uint64_t)st.st_size;
  return f;
}

/* ---- .npy: the header ---- */
/* NumPy's descr for a dtype ("<f8"); NULL for bf16, which NumPy lacks. */
/* NumPy's kind letter of a dtype. */
static char npy_kind(tc_dtype dt) {
  tc_class c = tc_dtype_class(dt);
  return c == TC_CLASS_BOOL ? 'b' : c == TC_CLASS_FLT ? 'f' : tc_dtype_is_unsigned(dt) ? 'u' : 'i';
}

static const char *npy_descr(tc_dtype dt, char *buf, size_t n) {
  if (dt == TC_DT_BF16) return NULL;
  size_t sz = tc_dtype_size(dt);
  snprintf(buf, n, "%c%c%zu", sz == 1 ? '|' : '<', npy_kind(dt), sz);
  return buf;
}

typedef struct {
  const char *s;
  size_t i, n;
} scan;

static void skip_ws(scan *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static bool eat(scan *p, char ch) {
  skip_ws(p);
  if (p->i < p->n && p->s[p->i] == ch) { p->i++; return true; }
  return false;
}

/* A quoted Python string without escapes, into buf. */
static bool str_lit(scan *p, char *buf, size_t n) {
  skip_ws(p);
  if (p->i >= p->n || (p->s[p->i] != '\'' && p->s[p->i] != '"')) return false;
  char q = p->s[p->i++];
  size_t k = 0;
  while (p->i < p->n && p->s[p->i] != q) {
    if (p->s[p->i] == '\\' || k + 1 >= n) return false;
    buf[k++] = p->s[p->i++];
  }
  if (p->i >= p->n) return false;
  p->i++;
  buf[k] = 0;
  return true;
}


/* Parses descr into dt and the byte order; fills why on failure. */
static bool parse_descr(const char *d, npy_header *h, char *why, size_t wn) {
  char order = '=';
  const char *p = d;
  if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
  char kind = *p ? *p++ : 0;
  char *end;
  long sz = strtol(p, &end, 10);
  if (!kind || end == p || *end || sz <= 0) {
    snprintf(why, wn, "unsupported dtype '%s' (structured, string and object arrays are not read)", d);
    return false;
  }
  int found = -1;
  for (int t = 0; t < TC_DT_COUNT && found < 0; t++) {
    char k = npy_kind((tc_dtype)t);
    if (t != TC_DT_BF16 && k == kind && (long)tc_dtype_size((tc_dtype)t) == sz) found = t;
  }
  if (found < 0) {
    if (kind == 'c')
      snprintf(why, wn, "complex dtype '%s' is not supported", d);
    else
      snprintf(why, wn, "unsupported dtype '%s' (tcalc reads b1, i1-i8, u1-u8, f2, f4, f8)", d);
    return false;
  }
  h->dt = (tc_dtype)found;
  if (order == '|' && sz > 1) {
    snprintf(why, wn, "dtype '%s' has no byte order", d);
    return false;
  }
  bool little = order == '<' || ((order == '=' || order == '|') && host_little());
  h->swap = sz > 1 && little != host_little();
  return true;
}

/* The header dict: {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), } */
static bool parse_header(const char *s, size_t n, npy_header *h, char *why, size_t wn) {
  scan p = {s, 0, n};
  bool have[3] = {false, false, false};
  memset(h, 0, sizeof *h);
  if (!eat(&p, '{')) { snprintf(why, wn, "the header is not a Python dict"); return false; }
  for (;;) {
    if (eat(&p, '}')) break;
    char key[32];
    if (!str_lit(&p, key, sizeof key) || !eat(&p, ':')) {
      snprintf(why, wn, "malformed header near byte %zu", p.i);
      return false;
    }
    int k = !strcmp(key, "descr") ? 0 : !strcmp(key, "fortran_order") ? 1 : !strcmp(key, "shape") ? 2 : -1;
    if (k < 0) { snprintf(why, wn, "unexpected key '%s' in the header", key); return false; }
    if (have[k]) { snprintf(why, wn, "key '%s' appears twice in the header", key); return false; }
    have[k] = true;
    skip_ws(&p);
    if (k == 0) {
      char d[32];
      if (!str_lit(&p, d, sizeof d)) {
        snprintf(why, wn, "descr is not a simple dtype string (structured arrays are not read)");
        return false;
      }
      if (!parse_descr(d, h, why, wn)) return false;
    } else if (k == 1) {
      if (p.n - p.i >= 4 && !memcmp(p.s + p.i, "True", 4)) { h->fortran = true; p.i += 4; }
      else if (p.n - p.i >= 5 && !memcmp(p.s + p.i, "False", 5)) { h->fortran = false; p.i += 5; }
      else { snprintf(why, wn, "fortran_order is neither True nor False"); return false; }
    } else {
      if (!eat(&p, '(')) { snprintf(why, wn, "shape is not a tuple"); return false; }
      h->ndim = 0;
      while (!eat(&p, ')')) {
        skip_ws(&p);
        if (p.i < p.n && p.s[p.i] == '-') { snprintf(why, wn, "shape has a negative dimension"); return false; }
        if (p.i >= p.n || p.s[p.i] < '0' || p.s[p.i] > '9') {
          snprintf(why, wn, "malformed shape near byte %zu", p.i);
          return false;
        }
        int64_t v = 0;
        while (p.i < p.n && p.s[p.i] >= '0' && p.s[p.i] <= '9') {
          if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p.s[p.i] - '0', &v)) {
            snprintf(why, wn, "shape has a dimension too large to count");
            return false;
          }
          p.i++;
        }
        if (p.i < p.n && p.s[p.i] == 'L') p.i++;   /* Python 2 longs */
        if (h->ndim >= TC_MAX_DIMS) {
          snprintf(why, wn, "shape has more than %d dimensions", TC_MAX_DIMS);
          return false;
        }
        h->shape[h->ndim++] = v;
        if (!eat(&p, ',')) {
          if (!eat(&p, ')')) { snprintf(why, wn, "malformed shape near byte %zu", p.i); return false; }
          break;
        }
      }
    }
    if (!eat(&p, ',')) {
      if (!eat(&p, '}')) { snprintf(why, wn, "malformed header near byte %zu", p.i); return false; }
      break;
    }
  }
  skip_ws(&p);
  if (p.i != p.n) { snprintf(why, wn, "unexpected text after the header dict"); return false; }
  if (!have[0] || !have[1] || !have[2]) {
    snprintf(why, wn, "the header lacks '%s'", !have[0] ? "descr" : !have[1] ? "fortran_order" : "shape");
    return false;
  }
  return true;
}

/* ---- .npy: load ---- */
/* A file read through a tc_rd: fread, and the reason of a short read. */
static size_t file_read(tc_rd *r, void *buf, size_t n) {
  size_t got = fread(buf, 1, n, r->f);
  if (got != n) r->why = ferror(r->f) ? strerror(errno) : "the file ended early";
  return got;
}

/* Reads nbytes from r into t's storage (from byte 0) in chunks. */
static int read_into(tc_rd *r, const char *path, tc_op op, tc_tensor *t, uint64_t nbytes, bool swap, tc_err *err) {
  size_t es = tc_dtype_size(t->dtype), chunk = IO_CHUNK - IO_CHUNK % es;
  unsigned char *buf = malloc(chunk);
  if (!buf) return tc_err_set(err, TC_E_OOM, (int)op, (int)t->dtype, "allocation failed");
  const tc_engine *e = tc_engines[t->storage->engine];
  int rc = 0;
  for (uint64_t off = 0; off < nbytes && rc == 0; off += chunk) {
    size_t n = nbytes - off < chunk ? (size_t)(nbytes - off) : chunk;
    if (r->read(r, buf, n) != n) {
      rc = tc_io_fail(err, op, (int)t->dtype, path, "%s", r->why);
      break;
    }
    if (swap) byteswap(buf, n, es);
    if (t->dtype == TC_DT_BOOL)
      for (size_t i = 0; i < n; i++) buf[i] = buf[i] != 0;
    rc = e->upload(tc_tensor_data(t) + off, buf, n, err);
    tc_progress_add((int64_t)n);
    if (rc == 0 && tc_interrupt_flag) rc = tc_io_interrupted(err, op, (int)t->dtype);
  }
  free(buf);
  return rc;
}

/* The magic bytes, version and header length: prefix + hlen bytes come
 * before the header dict. */
static int npy_prefix(tc_rd *r, uint64_t size, const char *path, tc_op op, uint64_t *prefix, uint64_t *hlen,
                      tc_err *err) {
  unsigned char pre[12];
  if (size < 10) return tc_io_fail(err, op, -1, path, "too short for a .npy file (%llu bytes)", (unsigned long long)size);
  if (r->read(r, pre, 10) != 10) return tc_io_fail(err, op, -1, path, "%s", r->why);
  if (memcmp(pre, "\x93NUMPY", 6)) return tc_io_fail(err, op, -1, path, "not a .npy file (bad magic bytes)");
  int major = pre[6], minor = pre[7];
  if (major == 1 && minor == 0) {
    *hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    *prefix = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (size < 12) return tc_io_fail(err, op, -1, path, "truncated header");
    if (r->read(r, pre + 10, 2) != 2) return tc_io_fail(err, op, -1, path, "%s", r->why);
    *hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    *prefix = 12;
  } else {
    return tc_io_fail(err, op, -1, path, "unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)", major, minor);
  }
  if (*hlen > NPY_MAX_HEADER)
    return tc_io_fail(err, op, -1, path, "header of %llu bytes is too large", (unsigned long long)*hlen);
  if (*prefix + *hlen > size)
    return tc_io_fail(err, op, -1, path, "truncated header: it says %llu bytes, the file has %llu after the prefix",
                      (unsigned long long)*hlen, (unsigned long long)(size - *prefix));
  return 0;
}

/* The header dict after the prefix, parsed into h. */
static int npy_dict(tc_rd *r, uint64_t hlen, const char *path, tc_op op, npy_header *h, tc_err *err) {
  char *hdr = malloc((size_t)hlen + 1), why[200];
  int rc = 0;
  if (!hdr) rc = tc_err_set(err, TC_E_OOM, (int)op, -1, "allocation failed");
  else if (r->read(r, hdr, (size_t)hlen) != hlen) rc = tc_io_fail(err, op, -1, path, "%s", r->why);
  for (uint64_t i = 0; i < hlen && rc == 0; i++)
    if (hdr[i] == 0 || (unsigned char)hdr[i] >= 0x80)
      rc = tc_io_fail(err, op, -1, path, "the header has a byte that is not ASCII text");
  if (rc == 0) {
    hdr[hlen] = 0;
    if (!parse_header(hdr, (size_t)hlen, h, why, sizeof why)) rc = tc_io_fail(err, op, -1, path, "%s", why);
  }
  free(hdr);
  return rc;
}

int tc_npy_header(tc_rd *r, uint64_t size, const char *path, tc_op op, npy_header *h, tc_err *err) {
  uint64_t prefix = 0, hlen = 0;
  if (npy_prefix(r, size, path, op, &prefix, &hlen, err) != 0 || npy_dict(r, hlen, path, op, h, err) != 0) return -1;
  int64_t numel;
  uint64_t have = size - prefix - hlen;
  char sh[256];
  tc_format_dims(sh, sizeof sh, h->ndim, h->shape);
  h->offset = prefix + hlen;
  if (!tc_shape_numel(h->ndim, h->shape, &numel) ||
      __builtin_mul_overflow((uint64_t)numel, (uint64_t)tc_dtype_size(h->dt), &h->nbytes))
    return tc_io_fail(err, op, (int)h->dt, path, "shape %s is too large to count", sh);
  if (have < h->nbytes)
    return tc_io_fail(err, op, (int)h->dt, path, "truncated data: shape %s of %s needs %llu bytes, the file has %llu", sh,
                      tc_dtype_name(h->dt), (unsigned long long)h->nbytes, (unsigned long long)have);
  if (have > h->nbytes)
    return tc_io_fail(err, op, (int)h->dt, path, "%llu bytes after the data (shape %s of %s is %llu bytes)",
                      (unsigned long long)(have - h->nbytes), sh, tc_dtype_name(h->dt), (unsigned long long)h->nbytes);
  if (!tc_op_supported(op, h->dt, tc_get_engine())) return tc_unsupported(op, h->dt, err);
  return 0;
}

/* A tensor stored in the header's order, as a C-order tensor: Fortran
 * order is C order of the reversed shape, transposed back (a view when
 * copy is false). Takes t. */
tc_tensor *tc_npy_orient(tc_tensor *t, const npy_header *h, bool copy, tc_op op, tc_err *err) {
  if (!t || !h->fortran || h->ndim < 2) return t;
  tc_tensor *v = tc_transpose(t, -1, NULL, err);
  tc_tensor_free(t);
  t = !v ? NULL : copy ? tc_contiguous(v, err) : tc_tensor_ref(v);
  tc_tensor_free(v);
  if (!t) tc_annotate(err, op, (int)h->dt);
  return t;
}

/* The shape as stored: reversed for Fortran order. */
void tc_npy_stored_shape(const npy_header *h, int64_t *shape) {
  for (int i = 0; i < h->ndim; i++) shape[i] = h->fortran ? h->shape[h->ndim - 1 - i] : h->shape[i];
}

tc_tensor *tc_npy_read(tc_rd *r, uint64_t size, const char *path, tc_op op, tc_err *err) {
  npy_header h;
  if (tc_npy_header(r, size, path, op, &h, err) != 0) return NULL;
  int64_t shape[TC_MAX_DIMS];
  tc_npy_stored_shape(&h, shape);
  tc_tensor *t = tc_tensor_new(h.dt, h.ndim, shape, err);
  if (!t) { tc_annotate(err, op, (int)h.dt); return NULL; }
  tc_progress_add((int64_t)h.offset);
  if (read_into(r, path, op, t, h.nbytes, h.swap, err) != 0) { tc_tensor_free(t); return NULL; }
  return tc_npy_orient(t, &h, true, op, err);
}

tc_tensor *tc_load_npy(const char *path, tc_err *err) {
  uint64_t size;
  tc_tensor *t = NULL;
  tc_io_progress("load", path, 0, TC_PROGRESS_BYTES);
  FILE *f = tc_io_open_read(path, TC_OP_LOAD, &size, err);
  if (f) {
    tc_progress_reset((int64_t)size);   /* after a pipe's spooling: reading the copy */
    tc_rd r = {file_read, "", f, NULL};
    t = tc_npy_read(&r, size, path, TC_OP_LOAD, err);
    fclose(f);
  }
  tc_progress_end();
  return t;
}

/* ---- .npy: mapped ---- */
/* What the data must be for the tensor to read it where it lies. */
static int map_check(tc_rd *r, const npy_header *h, const char *path, tc_err *err) {
  const tc_op op = TC_OP_LOAD;
  if (h->swap) return tc_io_fail(err, op, (int)h->dt, path, "big-endian data cannot be mapped; load it without mmap");
  if (h->offset % tc_dtype_size(h->dt))
    return tc_io_fail(err, op, (int)h->dt, path, "the data is not aligned to its %zu-byte elements; load it without mmap",
                      tc_dtype_size(h->dt));
  if (h->dt != TC_DT_BOOL) return 0;
  /* kernels rely on a bool being 0 or 1: read through once (not kept) */
  unsigned char *buf = malloc(IO_CHUNK);
  int rc = buf ? 0 : tc_err_set(err, TC_E_OOM, (int)op, -1, "allocation failed");
  for (uint64_t off = 0; off < h->nbytes && rc == 0; off += IO_CHUNK) {
    size_t n = h->nbytes - off < IO_CHUNK ? (size_t)(h->nbytes - off) : IO_CHUNK;
    if (r->read(r, buf, n) != n) rc = tc_io_fail(err, op, (int)h->dt, path, "%s", r->why);
    for (size_t i = 0; i < n && rc == 0; i++)
      if (buf[i] > 1) rc = tc_io_fail(err, op, (int)h->dt, path, "a bool byte other than 0 and 1; load it without mmap");
    if (rc == 0 && tc_interrupt_flag) rc = tc_io_interrupted(err, op, (int)h->dt);
  }
  free(buf);
  return rc;
}

static tc_tensor *map_npy(const char *path, tc_err *err) {
  const tc_op op = TC_OP_LOAD;
  uint64_t size;
  FILE *f = tc_io_open_read(path, op, &size, err);
  if (!f) return NULL;
  tc_rd r = {file_read, "", f, NULL};
  npy_header h;
  tc_tensor *t = NULL;
  int64_t shape[TC_MAX_DIMS];
  if (tc_npy_header(&r, size, path, op, &h, err) == 0 && map_check(&r, &h, path, err) == 0) {
    tc_npy_stored_shape(&h, shape);
    /* tc_npy_header checked that the file is as large as the header says */
    void *map = h.nbytes ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(f), 0) : NULL;
    if (!h.nbytes) t = tc_tensor_new_on(TC_ENGINE_CPU, h.dt, h.ndim, shape, err);
    else if (map == MAP_FAILED) tc_io_fail(err, op, (int)h.dt, path, "cannot map: %s", strerror(errno));
    else t = tc_tensor_mapped(map, (size_t)size, (size_t)h.offset, h.dt, h.ndim, shape, err);
    if (t) t = tc_npy_orient(t, &h, false, op, err);
  }
  fclose(f);
  return t;
}

tc_tensor *tc_map_npy(const char *path, tc_err *err) {
  tc_io_progress("load", path, 0, TC_PROGRESS_BYTES);   /* a pipe is read into a file first */
  tc_tensor *t = map_npy(path, err);
  tc_progress_end();
  return t;
}

/* ---- JSON (src/json.c parses) ---- */
/* The whole text is read: its size is checked against the memory limit
 * first, so a file larger than the limit is refused before it is read. */
static tc_tensor *load_json(const char *path, tc_err *err) {
  const tc_op op = TC_OP_LOAD_JSON;
  uint64_t size, limit = tc_get_max_memory(), used = tc_mem_in_use();
  FILE *f = tc_io_open_read(path, op, &size, err);
  if (!f) return NULL;
  tc_tensor *t = NULL;
  char *text = NULL;
  tc_progress_reset((int64_t)size);
  if (size > limit || used > limit - size || size >= SIZE_MAX) {
    tc_err_set(err, TC_E_OOM, (int)op, -1, "the JSON file (%llu bytes) does not fit the memory limit (:set max_memory)",
               (unsigned long long)size);
  } else if (!(text = malloc((size_t)size + 1))) {
    tc_err_set(err, TC_E_OOM, (int)op, -1, "allocation failed");
  } else {
    int rc = 0;
    for (uint64_t off = 0; off < size && rc == 0; off += IO_CHUNK) {
      size_t n = size - off < IO_CHUNK ? (size_t)(size - off) : IO_CHUNK;
      if (fread(text + off, 1, n, f) != n)
        rc = tc_io_fail(err, op, -1, path, "%s", ferror(f) ? strerror(errno) : "the file ended early");
      else if (tc_interrupt_flag) rc = tc_io_interrupted(err, op, -1);
      tc_progress_add((int64_t)n);
    }
    text[size] = 0;
    if (rc == 0 && memchr(text, 0, (size_t)size)) rc = tc_io_fail(err, op, -1, path, "a NUL byte: not JSON text");
    if (rc == 0) t = tc_from_json(text, (size_t)size, op, err);
  }
  free(text);
  fclose(f);
  return t;
}

tc_tensor *tc_load_json(const char *path, tc_err *err) {
  tc_io_progress("load_json", path, 0, TC_PROGRESS_BYTES);
  tc_tensor *t = load_json(path, err);
  tc_progress_end();
  return t;
}

/* ---- writing ----
 * A regular file, or a name that does not exist yet, is written as a new
 * temporary file in the same directory, flushed to the disk (fsync) and
 * renamed over the name, so the name holds the old file or the new one and
 * never part of one: a failed write, a full disk, an interrupt or SIGTERM
 * removes the temporary file and leaves the old file as it was. A name that
 * is a symbolic link is replaced by the new file, as rename(2) does (the
 * link's target is left as it is). A new file gets mode 0666 less the
 * umask; a replaced one keeps its permission bits. A device or FIFO (such
 * as /dev/stdout) is written in place. */

/* The temporary file being written, for tc_io_signal_cleanup (one save runs at a time). */
static char save_tmp[4096];
static volatile sig_atomic_t save_tmp_live;

void tc_io_signal_cleanup(void) {
  if (save_tmp_live) unlink(save_tmp);
}

int tc_open_write(tc_writer *w, const char *path, tc_op op, tc_err *err) {
  *w = (tc_writer){NULL, path, op, false};
  struct stat st;
  bool exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return tc_io_fail(err, op, -1, path, "cannot open for writing: %s", strerror(EISDIR));
  if (exists && !S_ISREG(st.st_mode)) {   /* a device or FIFO: in place */
    w->f = open_file(path, O_WRONLY | O_TRUNC, "wb", &st);
    return w->f ? 0 : tc_io_fail(err, op, -1, path, "cannot open for writing: %s", strerror(errno));
  }
  const char *slash = strrchr(path, '/');
  int dlen = slash ? (int)(slash - path) + 1 : 0;
  if ((size_t)dlen + 32 > sizeof save_tmp) return tc_io_fail(err, op, -1, path, "cannot open for writing: the path is too long");
  snprintf(save_tmp, sizeof save_tmp, "%.*s.tcalc-save-XXXXXX", dlen, path);
  int fd = mkstemp(save_tmp);
  if (fd < 0) return tc_io_fail(err, op, -1, path, "cannot open for writing: %s", strerror(errno));
  save_tmp_live = 1;
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask) != 0 || !(w->f = fdopen(fd, "wb"))) {
    int e = errno;
    close(fd);
    unlink(save_tmp);
    save_tmp_live = 0;
    return tc_io_fail(err, op, -1, path, "cannot open for writing: %s", strerror(e));
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  w->tmp = true;
  return 0;
}

/* Finishes a write: flushes and syncs, then renames the temporary file
 * over the name; on an earlier failure (rc), a failed write, or an
 * interrupt, removes the temporary file instead. */
int tc_close_write(tc_writer *w, int rc, tc_err *err) {
  bool bad = ferror(w->f);
  int saved = errno;
  if (!bad && rc == 0 && w->tmp && (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)) { bad = true; saved = errno; }
  if (fclose(w->f) != 0 && !bad) { bad = true; saved = errno; }
  /* a write that SIGINT cut short (EINTR) is the interrupt, not an io_error */
  if (rc == 0 && tc_interrupt_flag) rc = tc_io_interrupted(err, w->op, -1);
  if (bad && rc == 0) rc = tc_io_fail(err, w->op, -1, w->path, "write failed: %s", strerror(saved));
  if (w->tmp) {
    if (rc == 0 && rename(save_tmp, w->path) != 0) rc = tc_io_fail(err, w->op, -1, w->path, "cannot replace: %s", strerror(errno));
    if (rc != 0) unlink(save_tmp);
    save_tmp_live = 0;
  }
  return rc;
}

/* Hands x's elements in row-major order, little-endian, to fn in chunks. */
int tc_io_chunks(tc_tensor *x, tc_op op, int (*fn)(void *ctx, const unsigned char *p, size_t n), void *ctx,
                 tc_err *err) {
  tc_tensor *c = tc_contiguous(x, err);
  if (!c) return -1;
  size_t es = tc_dtype_size(c->dtype), chunk = IO_CHUNK - IO_CHUNK % es;
  uint64_t nbytes = (uint64_t)tc_numel(c) * es;
  unsigned char *buf = malloc(chunk);
  int rc = buf ? 0 : tc_err_set(err, TC_E_OOM, (int)op, (int)c->dtype, "allocation failed");
  const tc_engine *e = tc_engines[c->storage->engine];
  for (uint64_t off = 0; off < nbytes && rc == 0; off += chunk) {
    size_t n = nbytes - off < chunk ? (size_t)(nbytes - off) : chunk;
    rc = e->download(buf, tc_tensor_data(c) + off, n, err);
    if (rc == 0 && !host_little()) byteswap(buf, n, es);
    if (rc == 0) rc = fn(ctx, buf, n);
    tc_progress_add((int64_t)n);
    if (rc == 0 && tc_interrupt_flag) rc = tc_io_interrupted(err, op, (int)c->dtype);
  }
  free(buf);
  tc_tensor_free(c);
  return rc;
}

/* fwrite for tc_io_chunks: a failed write is 1, which tc_close_write reports. */
int tc_io_fwrite(void *f, const unsigned char *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : 1; }

size_t tc_npy_head(const tc_tensor *x, unsigned char *buf, size_t cap) {
  char descr[16];
  if (!npy_descr(x->dtype, descr, sizeof descr)) return 0;
  char shape[400] = "(";
  size_t len = 1;
  for (int i = 0; i < x->ndim; i++)
    len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld%s", i ? " " : "", (long long)x->shape[i],
                            x->ndim == 1 || i + 1 < x->ndim ? "," : "");
  snprintf(shape + len, sizeof shape - len, ")");
  int n = snprintf((char *)buf + 10, cap - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  /* pad with spaces and a newline so that the data starts at a multiple of 64 */
  size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64, hlen = (size_t)n + pad + 1;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  memset(buf + 10 + n, ' ', pad);
  buf[10 + hlen - 1] = '\n';
  return 10 + hlen;
}

static int save_npy(const char *path, tc_tensor *x, tc_err *err) {
  const tc_op op = TC_OP_SAVE;
  unsigned char head[TC_NPY_HEAD_MAX];
  size_t hn = tc_npy_head(x, head, sizeof head);
  if (!hn)
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)x->dtype,
                      "NumPy has no bf16 dtype; save f32(x) (exact) instead, or use save_csv");
  if (!tc_op_supported(op, x->dtype, tc_get_engine())) return tc_unsupported(op, x->dtype, err);
  tc_writer w;
  if (tc_open_write(&w, path, op, err) != 0) return -1;
  int rc = fwrite(head, 1, hn, w.f) == hn ? tc_io_chunks(x, op, tc_io_fwrite, w.f, err) : 1;
  if (rc == 1) rc = 0;   /* a write error: ferror(f) is set and tc_close_write reports it */
  return tc_close_write(&w, rc, err);
}

int tc_save_npy(const char *path, tc_tensor *x, tc_err *err) {
  tc_io_progress("save", path, tc_io_bytes(x), TC_PROGRESS_BYTES);
  int rc = save_npy(path, x, err);
  tc_progress_end();
  return rc;
}

/* ---- CSV ---- */
/* The one number syntax of CSV floats: an optional sign, then decimal
 * digits with an optional fraction and exponent, or inf or nan (any case).
 * No hexadecimal (strtod would take 0x10 and 0x1p3), no "infinity". */
static bool csv_decimal(const char *s) {
  const char *p = s + (*s == '+' || *s == '-');
  if (!strcasecmp(p, "inf") || !strcasecmp(p, "nan")) return true;
  int digits = 0;
  while (*p >= '0' && *p <= '9') { p++; digits++; }
  if (*p == '.') for (p++; *p >= '0' && *p <= '9'; p++) digits++;
  if (!digits) return false;
  if (*p == 'e' || *p == 'E') {
    p += 1 + (p[1] == '+' || p[1] == '-');
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') p++;
  }
  return !*p;
}

/* Parses one field (NUL-terminated, trimmed) as dt into out (dt's storage). */
static bool csv_value(const char *s, tc_dtype dt, void *out, char *why, size_t wn) {
  tc_class c = tc_dtype_class(dt);
  if (c == TC_CLASS_BOOL) {
    uint8_t b;
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) b = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) b = 0;
    else { snprintf(why, wn, "'%s' is not a bool (true, false, 1 or 0)", s); return false; }
    memcpy(out, &b, 1);
    return true;
  }
  char *end;
  if (c == TC_CLASS_INT) {
    const char *p = s + (*s == '+' || *s == '-');
    if (*p < '0' || *p > '9') { snprintf(why, wn, "'%s' is not an integer", s); return false; }
    errno = 0;
    int bits = tc_dtype_bits(dt);
    int64_t w;
    if (tc_dtype_is_unsigned(dt)) {
      unsigned long long v = strtoull(p, &end, 10);
      if (*end) { snprintf(why, wn, "'%s' is not an integer", s); return false; }
      if (errno == ERANGE || (*s == '-' && v != 0) || (bits < 64 && v >> bits)) {
        snprintf(why, wn, "%s does not fit %s", s, tc_dtype_name(dt));
        return false;
      }
      w = (int64_t)v;
    } else {
      long long v = strtoll(s, &end, 10);
      if (*end) { snprintf(why, wn, "'%s' is not an integer", s); return false; }
      long long lo = bits == 64 ? INT64_MIN : -(1LL << (bits - 1)), hi = bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1;
      if (errno == ERANGE || v < lo || v > hi) { snprintf(why, wn, "%s does not fit %s", s, tc_dtype_name(dt)); return false; }
      w = v;
    }
    switch (bits) {
    case 8: { int8_t x = (int8_t)w; memcpy(out, &x, 1); break; }
    case 16: { int16_t x = (int16_t)w; memcpy(out, &x, 2); break; }
    case 32: { int32_t x = (int32_t)w; memcpy(out, &x, 4); break; }
    default: memcpy(out, &w, 8); break;
    }
    return true;
  }
  if (!*s) { snprintf(why, wn, "empty value"); return false; }
  if (!csv_decimal(s)) { snprintf(why, wn, "'%s' is not a number", s); return false; }
  double d = strtod(s, &end);
  switch (dt) {
  case TC_DT_F32: { float x = (float)d; memcpy(out, &x, 4); break; }
  case TC_DT_F16: { tc_f16 x = tc_f64_to_f16(d); memcpy(out, &x, 2); break; }
  case TC_DT_BF16: { tc_bf16 x = tc_f64_to_bf16(d); memcpy(out, &x, 2); break; }
  default: memcpy(out, &d, 8); break;
  }
  return true;
}

/* The reader of load_csv, numpy.loadtxt's formats: values separated by a
 * delimiter (blanks around a value dropped) or by runs of blanks
 * (numpy.savetxt's default), '#' comments, blank lines, CRLF, a leading
 * UTF-8 byte-order mark, and values in double quotes as spreadsheets
 * write them (a delimiter inside is text, "" is one quote). It reads a
 * line's values into a row buffer and then converts the used columns:
 * the same code counts and checks (pass 1, r->t NULL) and stores (pass 2). */
typedef struct {
  FILE *f;
  const char *path;
  tc_dtype dt;
  char delim;                  /* the value separator; ' ': runs of blanks; 0: decide at the first data line */
  int64_t skip;                /* lines to skip at the start (after a byte-order mark) */
  int64_t rows, cols;          /* data rows seen, values per row */
  int nuse;                    /* the columns used (usecols), -1: all */
  int64_t *use;                /* normalised at the first data row */
  const unsigned char *fill;   /* the value of an empty field (fill=, else NaN for floats); NULL: an error */
  /* the line being read: its values, NUL-terminated, one after another */
  char *text;
  size_t tlen, tcap;
  int64_t *at;                 /* where each value starts in text */
  int64_t nat, atcap;
  /* pass 2: the tensor and a chunk buffer */
  tc_tensor *t;
  unsigned char *buf;
  size_t fill_n, chunk;
  uint64_t written;
} csv_reader;

#define CSV_MAX_LINE ((size_t)1 << 26)

static int csv_flush(csv_reader *r, tc_err *err) {
  if (!r->fill_n) return 0;
  int rc = tc_engines[r->t->storage->engine]->upload(tc_tensor_data(r->t) + r->written, r->buf, r->fill_n, err);
  r->written += r->fill_n;
  r->fill_n = 0;
  return rc;
}

static int csv_oom(csv_reader *r, tc_err *err) {
  return tc_err_set(err, TC_E_OOM, TC_OP_LOAD_CSV, (int)r->dt, "out of memory reading %s", r->path);
}

static int csv_putc(csv_reader *r, char ch, int64_t line, tc_err *err) {
  if (r->tlen + 1 >= r->tcap) {
    if (r->tcap >= CSV_MAX_LINE)
      return tc_io_fail(err, TC_OP_LOAD_CSV, (int)r->dt, r->path, "line %lld is longer than %zu bytes", (long long)line,
                        CSV_MAX_LINE);
    size_t cap = r->tcap ? r->tcap * 2 : 256;
    char *t = realloc(r->text, cap);
    if (!t) return csv_oom(r, err);
    r->text = t;
    r->tcap = cap;
  }
  r->text[r->tlen++] = ch;
  return 0;
}

/* Ends the value being read: blanks after it dropped (not inside quotes). */
static int csv_end_value(csv_reader *r, int64_t start, size_t keep, int64_t line, tc_err *err) {
  while (r->tlen > keep && (r->text[r->tlen - 1] == ' ' || r->text[r->tlen - 1] == '\t' || r->text[r->tlen - 1] == '\r'))
    r->tlen--;
  if (csv_putc(r, 0, line, err) != 0) return -1;
  if (r->nat == r->atcap) {
    int64_t cap = r->atcap ? r->atcap * 2 : 16;
    int64_t *at = realloc(r->at, sizeof(int64_t) * (size_t)cap);
    if (!at) return csv_oom(r, err);
    r->at = at;
    r->atcap = cap;
  }
  r->at[r->nat++] = start;
  return 0;
}

/* A data line's used values, converted (and, in pass 2, stored). */
static int csv_row(csv_reader *r, int64_t line, tc_err *err) {
  const tc_op op = TC_OP_LOAD_CSV;
  if (r->rows == 0) {
    r->cols = r->nat;
    for (int k = 0; k < r->nuse; k++) {
      int64_t c = r->use[k];
      if (c < -r->cols || c >= r->cols)
        return tc_err_set(err, TC_E_BAD_ARG, op, (int)r->dt, "usecols: column %lld is out of range for the %lld column%s of %s",
                          (long long)c, (long long)r->cols, r->cols == 1 ? "" : "s", r->path);
      if (c < 0) r->use[k] = c + r->cols;
    }
  } else if (r->nat != r->cols) {
    return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld has %lld value%s, earlier lines have %lld", (long long)line,
                      (long long)r->nat, r->nat == 1 ? "" : "s", (long long)r->cols);
  }
  size_t es = tc_dtype_size(r->dt);
  unsigned char scratch[16];
  char why[200];
  int64_t n = r->nuse >= 0 ? r->nuse : r->cols;
  for (int64_t k = 0; k < n; k++) {
    int64_t c = r->nuse >= 0 ? r->use[k] : k;
    const char *v = r->text + r->at[c];
    unsigned char *out = r->t ? r->buf + r->fill_n : scratch;
    if (!*v && r->fill) memcpy(out, r->fill, es);
    else if (!*v)
      return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld, column %lld: empty value (%s columns need fill=)",
                        (long long)line, (long long)c + 1, tc_dtype_name(r->dt));
    else if (strlen(v) > CSV_MAX_FIELD)
      return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld, column %lld: a value longer than %d characters",
                        (long long)line, (long long)c + 1, CSV_MAX_FIELD);
    else if (!csv_value(v, r->dt, out, why, sizeof why))
      return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld, column %lld: %s%s", (long long)line, (long long)c + 1,
                        why, r->rows == 0 && !strchr("0123456789+-.", *v) ? " (skip a header line with skiprows=1)" : "");
    if (r->t) {
      r->fill_n += es;
      if (r->fill_n == r->chunk && csv_flush(r, err) != 0) return -1;
    }
  }
  r->rows++;
  return 0;
}

/* The delimiter when none was given: a comma if the first data line (not
 * blank, not a comment) has one outside quotes, else runs of blanks. */
static char csv_guess(csv_reader *r) {
  bool quoted = false, data = false;
  for (int ch; (ch = getc_unlocked(r->f)) != EOF;) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) return ',';
    else if ((ch == '#' && !quoted) || ch == '\n') {
      if (data) return ' ';   /* the first data line ends without a comma */
      if (ch == '#')
        while ((ch = getc_unlocked(r->f)) != EOF && ch != '\n') {}
    } else if (ch != ' ' && ch != '\t' && ch != '\r') data = true;
  }
  return ' ';
}

/* One pass over the file: counts and checks (r->t NULL) or stores values. */
/* The file from its start to its first data line: a UTF-8 byte-order mark
 * (spreadsheets write one), the skipped lines (*line: the next line's
 * number), and the delimiter guessed when none was given. */
static int csv_start(csv_reader *r, int64_t *line, tc_err *err) {
  *line = 1;
  rewind(r->f);
  unsigned char bom[3];
  if (fread(bom, 1, 3, r->f) != 3 || memcmp(bom, "\xEF\xBB\xBF", 3)) rewind(r->f);
  for (int ch = 0; *line <= r->skip && ch != EOF;)
    if ((ch = getc_unlocked(r->f)) == '\n') (*line)++;
  if (r->delim) return 0;
  long at = ftell(r->f);
  r->delim = csv_guess(r);
  if (at < 0 || fseek(r->f, at, SEEK_SET) != 0)
    return tc_io_fail(err, TC_OP_LOAD_CSV, (int)r->dt, r->path, "cannot read it again: %s", strerror(errno));
  return 0;
}

/* Every MiB read: progress, and a look at the interrupt flag. */
static int csv_poll(csv_reader *r, tc_err *err) {
  tc_progress_add(1 << 20);
  return tc_interrupt_flag ? tc_io_interrupted(err, TC_OP_LOAD_CSV, (int)r->dt) : 0;
}

static int csv_pass(csv_reader *r, tc_err *err) {
  const tc_op op = TC_OP_LOAD_CSV;
  int64_t line;
  r->rows = 0;
  if (csv_start(r, &line, err) != 0) return -1;
  bool ws = r->delim == ' ';
  /* the line: its values so far; the value being read starts at vstart
     (open: it has begun), keep = where its quoted text ends */
  r->tlen = 0;
  r->nat = 0;
  int64_t vstart = 0, qline = 0;
  size_t keep = 0;
  bool open = false, in_quote = false, after_quote = false, comment = false;
  for (uint64_t nread = 1;; nread++) {
    int ch = getc_unlocked(r->f);
    if (nread % (1 << 20) == 0 && csv_poll(r, err) != 0) return -1;
    if (in_quote) {
      if (ch == EOF)
        return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld: a quoted value is never closed", (long long)qline);
      if (ch == '"') {
        int next = getc_unlocked(r->f);
        if (next != '"') {   /* the closing quote */
          if (next != EOF) ungetc(next, r->f);
          in_quote = false;
          after_quote = true;
          keep = r->tlen;
          continue;
        }
      }
      if (ch == '\n') line++;
      if (ch == 0) return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld: a NUL byte is not CSV text", (long long)line);
      if (csv_putc(r, (char)ch, line, err) != 0) return -1;
      continue;
    }
    if (comment && ch != '\n' && ch != EOF) continue;
    if (ch == '#') { comment = true; continue; }
    bool blank = ch == ' ' || ch == '\t' || ch == '\r';
    bool sep = ws ? blank : ch == r->delim;
    if (sep || ch == '\n' || ch == EOF) {
      bool end_line = !sep;
      /* a value ends here: at a delimiter always; at a blank (ws) or line
         end only when one has begun, or (delimiter mode) the line has values */
      if (open || (!ws && (sep || r->nat > 0))) {
        if (!open) vstart = (int64_t)(keep = r->tlen);   /* an empty value */
        if (csv_end_value(r, vstart, keep, line, err) != 0) return -1;
        open = after_quote = false;
        keep = 0;
      }
      if (end_line) {
        if (r->nat > 0 && csv_row(r, line, err) != 0) return -1;
        r->tlen = 0;
        r->nat = 0;
        comment = false;
        line++;
        if (ch == EOF) break;
      }
      continue;
    }
    if (blank && !open) continue;   /* blanks before a value */
    if (after_quote && !blank)
      return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld, column %lld: text after a closing quote",
                        (long long)line, (long long)r->nat + 1);
    if (ch == 0 || (ch < 0x20 && ch != '\t' && ch != '\r'))
      return tc_io_fail(err, op, (int)r->dt, r->path, "line %lld: byte 0x%02x is not CSV text", (long long)line, ch);
    if (!open) {
      open = true;
      vstart = (int64_t)r->tlen;
      keep = r->tlen;
      if (ch == '"') { in_quote = true; qline = line; continue; }
    }
    if (csv_putc(r, (char)ch, line, err) != 0) return -1;
    if (!blank) keep = r->tlen;
  }
  if (ferror(r->f)) return tc_io_fail(err, op, (int)r->dt, r->path, "read failed: %s", strerror(errno));
  return r->t ? csv_flush(r, err) : 0;
}

tc_tensor *tc_load_csv(const char *path, tc_dtype dt, tc_err *err) {
  return tc_load_csv_with(path, dt, ",", 0, 0, NULL, NULL, err);
}

/* usecols as i64 on the host: an integer or a 1-D list of them. */
static int csv_usecols(tc_tensor *u, int64_t **use, int *nuse, tc_err *err) {
  const tc_op op = TC_OP_LOAD_CSV;
  if (tc_dtype_class(u->dtype) != TC_CLASS_INT || u->ndim > 1 || tc_numel(u) > INT32_MAX)
    return tc_err_set(err, TC_E_BAD_ARG, op, -1, "usecols must be an integer or a list of integers");
  tc_tensor *w = tc_cast(u, TC_DT_I64, err);
  if (!w) return -1;
  *nuse = (int)tc_numel(w);
  *use = malloc(sizeof(int64_t) * (size_t)(*nuse ? *nuse : 1));
  int rc = *use ? tc_tensor_to_host(w, *use, err) : tc_err_set(err, TC_E_OOM, op, -1, "out of memory");
  tc_tensor_free(w);
  return rc;
}

static tc_tensor *load_csv(const char *path, tc_dtype dt, const char *delimiter, int64_t skip_header,
                           int64_t skiprows, tc_tensor *usecols, tc_tensor *fill, tc_err *err) {
  const tc_op op = TC_OP_LOAD_CSV;
  char d = delimiter ? delimiter[0] : 0;
  if (delimiter && (!d || delimiter[1] || (d != '\t' && d != ' ' && (!ispunct((unsigned char)d) || strchr(".+-#\"'", d)))))
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1,
                      "delimiter must be one punctuation character (not . + - # or a quote), a tab, or \" \" for runs "
                      "of blanks, not \"%.20s\"", delimiter), NULL;
  if (skip_header < 0 || skiprows < 0)
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "%s must be >= 0, not %lld", skip_header < 0 ? "skip_header" : "skiprows",
                      (long long)(skip_header < 0 ? skip_header : skiprows)), NULL;
  if (!tc_op_supported(op, dt, tc_get_engine())) { tc_unsupported(op, dt, err); return NULL; }
  unsigned char fillv[16];
  tc_tensor *fv = fill ? tc_value_as(fill, dt, op, err) : NULL;
  if (fill && (!fv || fv->ndim != 0 || tc_tensor_to_host(fv, fillv, err) != 0)) {
    if (fv && fv->ndim != 0) tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)dt, "fill must be a single value");
    tc_tensor_free(fv);
    return NULL;
  }
  tc_tensor_free(fv);
  char why[200];
  bool nan_fill = !fill && tc_dtype_class(dt) == TC_CLASS_FLT && csv_value("nan", dt, fillv, why, sizeof why);
  csv_reader r = {.path = path, .dt = dt, .delim = d, .skip = skip_header + skiprows, .nuse = -1,
                  .fill = fill || nan_fill ? fillv : NULL};
  if (usecols && csv_usecols(usecols, &r.use, &r.nuse, err) != 0) { free(r.use); return NULL; }
  uint64_t size;
  tc_tensor *t = NULL;
  r.f = tc_io_open_read(path, op, &size, err);
  if (r.f) tc_progress_reset(size <= INT64_MAX / 2 ? (int64_t)(2 * size) : 0);   /* two passes */
  if (r.f && csv_pass(&r, err) == 0) {
    tc_progress_set((int64_t)size);
    int64_t shape[2], cols = r.nuse >= 0 ? r.nuse : r.cols;
    int nd;
    if (r.rows == 0) { nd = 1; shape[0] = 0; }
    else if (cols == 1) { nd = 1; shape[0] = r.rows; }
    else if (r.rows == 1) { nd = 1; shape[0] = cols; }
    else { nd = 2; shape[0] = r.rows; shape[1] = cols; }
    t = tc_tensor_new(dt, nd, shape, err);
    if (!t) tc_annotate(err, op, (int)dt);
    if (t && tc_numel(t) > 0) {
      size_t es = tc_dtype_size(dt);
      r.chunk = IO_CHUNK - IO_CHUNK % es;
      r.buf = malloc(r.chunk);
      r.t = t;
      int rc = r.buf ? csv_pass(&r, err) : tc_err_set(err, TC_E_OOM, (int)op, (int)dt, "allocation failed");
      if (rc == 0 && r.written != (uint64_t)tc_numel(t) * es)
        rc = tc_io_fail(err, op, (int)dt, path, "the file changed while it was read");
      free(r.buf);
      if (rc != 0) { tc_tensor_free(t); t = NULL; }
    }
  }
  if (r.f) fclose(r.f);
  free(r.text);
  free(r.at);
  free(r.use);
  return t;
}

tc_tensor *tc_load_csv_with(const char *path, tc_dtype dt, const char *delimiter, int64_t skip_header,
                            int64_t skiprows, tc_tensor *usecols, tc_tensor *fill, tc_err *err) {
  tc_io_progress("load_csv", path, 0, TC_PROGRESS_BYTES);
  tc_tensor *t = load_csv(path, dt, delimiter, skip_header, skiprows, usecols, fill, err);
  tc_progress_end();
  return t;
}

/* A float as save_csv writes it: the shortest text that reads back to v
 * in dtype dt (src/shortest.c, as printing finds it), laid out as C's
 * "%.*g" lays out that many digits (1e+20, 12, 0.001, -0). */
static char *csv_float(char *p, double v, tc_dtype dt) {
  if (isnan(v) || isinf(v)) {
    const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
  }
  int nd, e;
  uint64_t d = tc_shortest(v, dt, &nd, &e);
  if (signbit(v)) *p++ = '-';
  if (e >= -4 && e < nd) {
    if (e >= 0) return tc_put_digits(p, d, nd, e + 1);
    memcpy(p, "0.000", 6);
    return tc_put_digits(p + 1 - e, d, nd, 0);
  }
  return tc_put_exponent(tc_put_digits(p, d, nd, 1), e);
}

/* The text goes out through a buffer of CSV_TEXT bytes, one fwrite each
 * time it fills (the interrupt flag is looked at then), and the data is
 * read where it lies on the host, or downloaded IO_CHUNK bytes at a time:
 * no copy of the tensor, no stdio call per value. An element with its
 * separator takes at most TC_PUT_ROOM + 8 bytes of room. */
#define CSV_TEXT ((size_t)64 << 10)
#define CSV_ROOM (TC_PUT_ROOM + 8)

static int save_csv(const char *path, tc_tensor *x, tc_err *err) {
  const tc_op op = TC_OP_SAVE_CSV;
  if (x->ndim != 1 && x->ndim != 2)
    return tc_err_set(err, TC_E_BAD_ARG, (int)op, (int)x->dtype, "writes 1-D and 2-D tensors, not %d-D (reshape first)",
                      x->ndim);
  if (!tc_op_supported(op, x->dtype, tc_get_engine())) return tc_unsupported(op, x->dtype, err);
  tc_dtype dt = x->dtype;
  tc_tensor *c = tc_contiguous(x, err);
  if (!c) { tc_annotate(err, op, (int)dt); return -1; }
  /* integers and bool exactly, floats from f64 (exact for every float dtype) */
  tc_class cls = tc_dtype_class(dt);
  bool uns = tc_dtype_is_unsigned(dt);
  size_t es = tc_dtype_size(dt), chunk = IO_CHUNK / es;
  int64_t cols = x->ndim == 2 ? x->shape[1] : 1, numel = tc_numel(c);
  const char *host = tc_tensor_host_data(c);
  char *down = host ? NULL : malloc(IO_CHUNK), *text = malloc(CSV_TEXT + CSV_ROOM);
  tc_writer w = {0};
  int rc = 0;
  if ((!host && !down) || !text) rc = tc_err_set(err, TC_E_OOM, (int)op, (int)dt, "allocation failed");
  else rc = tc_open_write(&w, path, op, err);
  FILE *f = w.f;
  const tc_engine *e = tc_engines[c->storage->engine];
  char *p = text;
  int64_t col = 0;
  for (int64_t lo = 0; f && rc == 0 && lo < numel; lo += (int64_t)chunk) {
    size_t n = numel - lo < (int64_t)chunk ? (size_t)(numel - lo) : chunk;
    const char *b = host ? host + lo * (int64_t)es : down;
    if (!host && (rc = e->download(down, tc_tensor_data(c) + lo * (int64_t)es, n * es, err)) != 0) break;
    for (size_t i = 0; i < n; i++, b += es) {
      if (cls == TC_CLASS_FLT) {
        double v;
        if (dt == TC_DT_F64) memcpy(&v, b, sizeof v);
        else v = tc_dtype_load_f64(dt, b);
        p = csv_float(p, v, dt);
      } else if (uns) p = tc_put_u64(p, (uint64_t)tc_dtype_load_i64(dt, b));
      else p = tc_put_i64(p, tc_dtype_load_i64(dt, b));
      *p++ = ++col == cols ? '\n' : ',';
      if (col == cols) col = 0;
      if (p >= text + CSV_TEXT) {
        if (fwrite(text, 1, (size_t)(p - text), f) != (size_t)(p - text)) break;
        p = text;
        if (tc_interrupt_flag) { rc = tc_io_interrupted(err, op, (int)dt); break; }
      }
    }
    tc_progress_add((int64_t)n);
    if (ferror(f)) break;
  }
  if (f && rc == 0 && !ferror(f)) fwrite(text, 1, (size_t)(p - text), f);
  free(down);
  free(text);
  tc_tensor_free(c);
  return f ? tc_close_write(&w, rc, err) : rc;
}

int tc_save_csv(const char *path, tc_tensor *x, tc_err *err) {
  tc_io_progress("save_csv", path, tc_numel(x), TC_PROGRESS_ELEMENTS);
  int rc = save_csv(path, x, err);
  tc_progress_end();
  return rc;
}
