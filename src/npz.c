/* NumPy .npz archives (SPEC 14): zip files of .npy members. The zip
 * structure is read and written here; zlib inflates deflated members.
 * Read: the central directory (ZIP64 sizes, offsets and end records too),
 * stored and deflated members, each checked before it is inflated (unsafe
 * names, encryption, sizes beyond the memory limit or beyond deflate's
 * ratio), inflated in chunks straight into the tensor, never past the
 * declared size, and its CRC-32 compared at the end. Write: stored members
 * as np.savez does, through the same temporary-file-and-rename as save;
 * no ZIP64, so an archive stops at 4 GiB. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "io_int.h"

#define ZIP_CHUNK ((size_t)1 << 16)
#define ZIP_MAX_CD ((uint64_t)64 << 20)   /* a central directory larger than this is refused */
#define ZIP_MAX_RATIO 1100                /* deflate never inflates more than 1032:1 */
#define ZIP_LIMIT 0xffffffffu

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++, v >>= 8) p[i] = (unsigned char)v;
}

static int read_at(FILE *f, uint64_t off, void *buf, size_t n) {
  return fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n ? 0 : -1;
}

typedef struct {
  FILE *f;
  const char *path;
  uint64_t size, cd_off, cd_size, count;
} zarchive;

typedef struct {
  char name[256];
  uint64_t usize, csize, off;
  uint32_t crc;
  unsigned method, flags;
} zentry;

/* ---- the end of central directory record (and ZIP64's) ---- */
static int zip_eocd64(zarchive *z, uint64_t at, tc_err *err) {
  unsigned char loc[20], rec[56];
  if (at < 20 || read_at(z->f, at - 20, loc, 20) != 0 || le(loc, 4) != 0x07064b50)
    return tc_io_fail(err, TC_OP_LOAD_NPZ, -1, z->path, "corrupt archive: a ZIP64 field without its end record");
  uint64_t off = le(loc + 8, 8);
  if (off > at - 20 || at - 20 - off < 56 || read_at(z->f, off, rec, 56) != 0 || le(rec, 4) != 0x06064b50)
    return tc_io_fail(err, TC_OP_LOAD_NPZ, -1, z->path, "corrupt archive: bad ZIP64 end record");
  z->count = le(rec + 32, 8);
  z->cd_size = le(rec + 40, 8);
  z->cd_off = le(rec + 48, 8);
  return 0;
}

static int zip_open(zarchive *z, tc_err *err) {
  const tc_op op = TC_OP_LOAD_NPZ;
  size_t tail = z->size < 22 + 65535 ? (size_t)z->size : 22 + 65535;
  unsigned char *buf = malloc(tail ? tail : 1);
  if (!buf) return tc_err_set(err, TC_E_OOM, (int)op, -1, "allocation failed");
  if (tail < 22 || read_at(z->f, z->size - tail, buf, tail) != 0) {
    free(buf);
    return tc_io_fail(err, op, -1, z->path, "not a .npz (zip) archive: too short or unreadable");
  }
  size_t i = tail - 22 + 1;
  while (i-- > 0)   /* the last record whose comment ends the file */
    if (le(buf + i, 4) == 0x06054b50 && i + 22 + le(buf + i + 20, 2) == tail) break;
  if (i == (size_t)-1) {
    free(buf);
    return tc_io_fail(err, op, -1, z->path, "not a .npz (zip) archive, or truncated: no end of central directory");
  }
  const unsigned char *e = buf + i;
  uint64_t at = z->size - tail + i;
  bool multi = le(e + 4, 2) != 0 || le(e + 6, 2) != 0;
  z->count = le(e + 10, 2);
  z->cd_size = le(e + 12, 4);
  z->cd_off = le(e + 16, 4);
  free(buf);
  if (multi) return tc_io_fail(err, op, -1, z->path, "multi-disk archives are not read");
  if ((z->count == 0xffff || z->cd_size == ZIP_LIMIT || z->cd_off == ZIP_LIMIT) && zip_eocd64(z, at, err) != 0) return -1;
  if (z->cd_off > at || z->cd_size > at - z->cd_off || z->count > z->cd_size / 46)
    return tc_io_fail(err, op, -1, z->path, "corrupt or truncated archive: the central directory lies outside the file");
  if (z->cd_size > ZIP_MAX_CD) return tc_io_fail(err, op, -1, z->path, "central directory too large");
  return 0;
}

/* ---- the central directory ---- */
/* A name that could escape a directory if extracted: absolute, a drive, a
 * ".." component, a NUL or control byte. */
static bool unsafe_name(const char *s, size_t n) {
  if (!n || s[0] == '/' || s[0] == '\\' || (n > 1 && s[1] == ':')) return true;
  for (size_t i = 0; i < n; i++) {
    if ((unsigned char)s[i] < 0x20) return true;
    bool start = i == 0 || s[i - 1] == '/' || s[i - 1] == '\\';
    bool dots = i + 1 < n && s[i] == '.' && s[i + 1] == '.' && (i + 2 == n || s[i + 2] == '/' || s[i + 2] == '\\');
    if (start && dots) return true;
  }
  return false;
}

/* ZIP64's extra field: the 8-byte values of the fields that hold 0xffffffff. */
static bool zip64_extra(const unsigned char *x, size_t n, zentry *e) {
  for (size_t i = 0; i + 4 <= n;) {
    size_t id = (size_t)le(x + i, 2), sz = (size_t)le(x + i + 2, 2), k = i + 4;
    if (k + sz > n) return false;
    if (id == 1) {
      uint64_t *f[3] = {&e->usize, &e->csize, &e->off};
      for (int j = 0; j < 3; j++) {
        if (*f[j] != ZIP_LIMIT) continue;
        if (k + 8 > i + 4 + sz) return false;
        *f[j] = le(x + k, 8);
        k += 8;
      }
    }
    i += 4 + sz;
  }
  return e->usize != ZIP_LIMIT && e->csize != ZIP_LIMIT && e->off != ZIP_LIMIT;
}

/* Entry k at cd[*pos]: parsed into e, *pos moved past it; why on failure. */
static bool zip_entry(const unsigned char *cd, uint64_t n, uint64_t *pos, zentry *e, const char **why) {
  const unsigned char *p = cd + *pos;
  if (n - *pos < 46 || le(p, 4) != 0x02014b50) { *why = "corrupt central directory"; return false; }
  size_t nl = (size_t)le(p + 28, 2), xl = (size_t)le(p + 30, 2), cl = (size_t)le(p + 32, 2);
  if (n - *pos - 46 < nl + xl + cl) { *why = "corrupt central directory"; return false; }
  e->flags = (unsigned)le(p + 8, 2);
  e->method = (unsigned)le(p + 10, 2);
  e->crc = (uint32_t)le(p + 16, 4);
  e->csize = le(p + 20, 4);
  e->usize = le(p + 24, 4);
  e->off = le(p + 42, 4);
  if (unsafe_name((const char *)p + 46, nl) || memchr(p + 46, 0, nl)) { *why = "an unsafe member name (absolute, .. or a control byte)"; return false; }
  if (nl >= sizeof e->name) { *why = "a member name longer than 255 bytes"; return false; }
  memcpy(e->name, p + 46, nl);
  e->name[nl] = 0;
  if (!zip64_extra(p + 46 + nl, xl, e)) { *why = "corrupt ZIP64 extra field"; return false; }
  *pos += 46 + nl + xl + cl;
  return true;
}

/* Whether member name is the array want ("x" is the member "x.npy"). */
static bool is_array(const char *name, const char *want) {
  size_t n = strlen(want);
  return !strncmp(name, want, n) && (!name[n] || !strcmp(name + n, ".npy"));
}

/* The member holding array want: every entry is checked, and each name
 * listed for the error when none matches. */
static int zip_find(zarchive *z, const char *want, zentry *out, tc_err *err) {
  const tc_op op = TC_OP_LOAD_NPZ;
  unsigned char *cd = malloc(z->cd_size ? (size_t)z->cd_size : 1);
  if (!cd) return tc_err_set(err, TC_E_OOM, (int)op, -1, "allocation failed");
  if (z->cd_size && read_at(z->f, z->cd_off, cd, (size_t)z->cd_size) != 0) {
    free(cd);
    return tc_io_fail(err, op, -1, z->path, "truncated archive: the central directory cannot be read");
  }
  char names[160] = "";
  const char *why = NULL;
  int found = 0;
  uint64_t pos = 0;
  for (uint64_t k = 0; k < z->count && !why; k++) {
    zentry e;
    if (!zip_entry(cd, z->cd_size, &pos, &e, &why)) break;
    if (is_array(e.name, want) && found++ == 0) *out = e;
    size_t len = strlen(names);
    if (len + strlen(e.name) + 3 < sizeof names) {
      if (len) strcat(names, ", ");
      strcat(names, e.name);
    }
  }
  free(cd);
  if (why) return tc_io_fail(err, op, -1, z->path, "%s", why);
  if (found > 1) return tc_io_fail(err, op, -1, z->path, "array '%s' is in the archive twice", want);
  if (!found) return tc_io_fail(err, op, -1, z->path, "no array '%s' in the archive (it holds: %s)", want, names[0] ? names : "nothing");
  return 0;
}

/* ---- one member ---- */
typedef struct {
  FILE *f;
  uint64_t cleft;      /* compressed bytes not yet read */
  bool deflated, ended;
  z_stream z;
  uint32_t crc;
  unsigned char in[ZIP_CHUNK];
} zmember;

static size_t stored_read(tc_rd *r, void *buf, size_t n) {
  zmember *m = r->ctx;
  size_t want = n < m->cleft ? n : (size_t)m->cleft, got = fread(buf, 1, want, m->f);
  m->cleft -= got;
  m->crc = (uint32_t)crc32(m->crc, buf, (uInt)got);
  if (got != n) r->why = "truncated archive: the member's data ends early";
  return got;
}

/* Inflates up to n bytes into buf, reading compressed input in chunks. */
static size_t inflate_read(tc_rd *r, void *buf, size_t n) {
  zmember *m = r->ctx;
  m->z.next_out = buf;
  m->z.avail_out = (uInt)n;
  while (m->z.avail_out > 0 && !m->ended) {
    if (m->z.avail_in == 0 && m->cleft > 0) {
      size_t want = m->cleft < ZIP_CHUNK ? (size_t)m->cleft : ZIP_CHUNK, got = fread(m->in, 1, want, m->f);
      m->cleft -= got;
      m->z.next_in = m->in;
      m->z.avail_in = (uInt)got;
      if (got != want) { r->why = "truncated archive: the member's data ends early"; break; }
    }
    int zr = inflate(&m->z, Z_NO_FLUSH);
    if (zr == Z_STREAM_END) m->ended = true;
    else if (zr == Z_BUF_ERROR && m->z.avail_in == 0 && m->cleft == 0) { r->why = "corrupt or truncated deflate data: it ends early"; break; }
    else if (zr != Z_OK) { r->why = "corrupt deflate data"; break; }
  }
  size_t got = n - m->z.avail_out;
  m->crc = (uint32_t)crc32(m->crc, buf, (uInt)got);
  if (got != n && m->ended) r->why = "the member inflates to fewer bytes than its declared size";
  return got;
}

/* Past the declared size (a header that lies): inflating goes on into a
 * scratch buffer until the stream ends or its actual size passes what the
 * memory limit leaves (budget), whichever comes first, so a zip bomb that
 * declares little is out_of_memory without inflating it all, and one that
 * stays under the limit is io_error with its true size. */
static int member_overrun(zmember *m, const zentry *e, const char *path, uint64_t budget, tc_err *err) {
  const tc_op op = TC_OP_LOAD_NPZ;
  unsigned char scratch[ZIP_CHUNK];
  uint64_t total = e->usize + 1; /* the byte member_end saw */
  tc_rd r = {inflate_read, "corrupt deflate data: no end of stream", NULL, m};
  for (size_t got; (got = inflate_read(&r, scratch, sizeof scratch)) != 0;) {
    total += got;
    if (total > budget)
      return tc_err_set(err, TC_E_OOM, (int)op, -1, "member %s of '%s' inflates to more than %llu bytes (it declares"
                        " %llu), beyond the memory limit (:set max_memory)", e->name, path,
                        (unsigned long long)budget, (unsigned long long)e->usize);
    if (tc_interrupt_flag)
      return tc_io_interrupted(err, op, -1);
  }
  if (!m->ended) return tc_io_fail(err, op, -1, path, "member %s: %s", e->name, r.why);
  return tc_io_fail(err, op, -1, path, "member %s inflates to %llu bytes, more than its declared %llu", e->name,
                    (unsigned long long)total, (unsigned long long)e->usize);
}

/* After the declared size: nothing more may inflate, and the CRC matches.
 * The member's tensor is allocated and counted in use by now. */
static int member_end(zmember *m, const zentry *e, const char *path, tc_err *err) {
  const tc_op op = TC_OP_LOAD_NPZ;
  if (m->deflated && !m->ended) {
    unsigned char extra[1];
    tc_rd r = {inflate_read, "corrupt deflate data: no end of stream", NULL, m};
    if (inflate_read(&r, extra, sizeof extra) != 0) {
      uint64_t limit = tc_get_max_memory(), other = tc_mem_in_use(); /* counts the tensor: about usize */
      other = other > e->usize ? other - e->usize : 0;
      return member_overrun(m, e, path, other < limit ? limit - other : 0, err);
    }
    if (!m->ended) return tc_io_fail(err, op, -1, path, "member %s: %s", e->name, r.why);
  }
  if (m->crc != e->crc)
    return tc_io_fail(err, op, -1, path, "member %s: CRC-32 mismatch (the archive says %08x, the data gives %08x)",
                      e->name, (unsigned)e->crc, (unsigned)m->crc);
  return 0;
}

/* Checks done before a byte is inflated. */
static int member_check(zarchive *z, const zentry *e, tc_err *err) {
  const tc_op op = TC_OP_LOAD_NPZ;
  uint64_t limit = tc_get_max_memory(), used = tc_mem_in_use();
  if (e->flags & 1) return tc_io_fail(err, op, -1, z->path, "member %s is encrypted", e->name);
  if (e->method != 0 && e->method != 8)
    return tc_io_fail(err, op, -1, z->path, "member %s: compression method %u is not read (stored and deflated are)",
                      e->name, e->method);
  if (e->method == 0 && e->csize != e->usize)
    return tc_io_fail(err, op, -1, z->path, "member %s: stored with two different sizes", e->name);
  if (e->usize > limit || used > limit - e->usize)
    return tc_err_set(err, TC_E_OOM, (int)op, -1, "member %s of '%s' inflates to %llu bytes, beyond the memory limit"
                      " (:set max_memory)", e->name, z->path, (unsigned long long)e->usize);
  if (e->usize / ZIP_MAX_RATIO > e->csize)
    return tc_io_fail(err, op, -1, z->path, "member %s declares %llu bytes from %llu compressed, beyond deflate's"
                      " ratio (a zip bomb?)", e->name, (unsigned long long)e->usize, (unsigned long long)e->csize);
  return 0;
}

/* Positions z->f at the member's data, after its local header. */
static int member_seek(zarchive *z, const zentry *e, tc_err *err) {
  unsigned char lh[30];
  if (e->off > z->cd_off || z->cd_off - e->off < 30 || read_at(z->f, e->off, lh, 30) != 0 || le(lh, 4) != 0x04034b50)
    return tc_io_fail(err, TC_OP_LOAD_NPZ, -1, z->path, "member %s: corrupt local header", e->name);
  uint64_t data = e->off + 30 + le(lh + 26, 2) + le(lh + 28, 2);
  if (data > z->cd_off || e->csize > z->cd_off - data)
    return tc_io_fail(err, TC_OP_LOAD_NPZ, -1, z->path, "member %s: its data runs past the end (truncated?)", e->name);
  if (fseeko(z->f, (off_t)data, SEEK_SET) != 0) return tc_io_fail(err, TC_OP_LOAD_NPZ, -1, z->path, "cannot seek");
  return 0;
}

static tc_tensor *load_npz(const char *path, const char *name, tc_err *err) {
  const tc_op op = TC_OP_LOAD_NPZ;
  zarchive z = {.path = path};
  z.f = tc_io_open_read(path, op, &z.size, err);
  if (!z.f) return NULL;
  zentry e;
  zmember *m = NULL;
  tc_tensor *t = NULL;
  if (zip_open(&z, err) == 0 && zip_find(&z, name, &e, err) == 0 && member_check(&z, &e, err) == 0 &&
      member_seek(&z, &e, err) == 0) {
    tc_progress_reset((int64_t)e.usize);   /* the member's bytes, inflated */
    if (!(m = calloc(1, sizeof *m))) tc_err_set(err, TC_E_OOM, (int)op, -1, "allocation failed");
    else {
      *m = (zmember){.f = z.f, .cleft = e.csize, .deflated = e.method == 8};
      bool ok = !m->deflated || inflateInit2(&m->z, -MAX_WBITS) == Z_OK;
      tc_rd r = {m->deflated ? inflate_read : stored_read, "", z.f, m};
      char shown[512];
      snprintf(shown, sizeof shown, "%s:%s", path, e.name);
      if (!ok) tc_err_set(err, TC_E_OOM, (int)op, -1, "zlib could not start");
      else t = tc_npy_read(&r, e.usize, shown, op, err);
      if (t && member_end(m, &e, path, err) != 0) { tc_tensor_free(t); t = NULL; }
      if (ok && m->deflated) inflateEnd(&m->z);
    }
  }
  free(m);
  fclose(z.f);
  return t;
}

tc_tensor *tc_load_npz(const char *path, const char *name, tc_err *err) {
  tc_io_progress("load_npz", path, 0, TC_PROGRESS_BYTES);
  tc_tensor *t = load_npz(path, name, err);
  tc_progress_end();
  return t;
}

/* ---- writing ---- */
static int crc_chunk(void *ctx, const unsigned char *p, size_t n) {
  *(uint32_t *)ctx = (uint32_t)crc32(*(uint32_t *)ctx, p, (uInt)n);
  return 0;
}

/* A local (sig 0x04034b50, 30 bytes) or central (0x02014b50, 46 bytes)
 * header of a stored member written in 1980 (deterministic output). */
static size_t zip_header(unsigned char *h, bool central, uint32_t crc, uint64_t size, uint64_t off, size_t nl) {
  memset(h, 0, 46);
  unsigned char *p = h + (central ? 2 : 0);   /* the central header adds "version made by" */
  put(h, central ? 0x02014b50 : 0x04034b50, 4);
  if (central) put(h + 4, 20, 2);
  put(p + 4, 20, 2);                          /* version needed: 2.0 */
  put(p + 12, 0x21, 2);                       /* 1980-01-01 */
  put(p + 14, crc, 4);
  put(p + 18, size, 4);
  put(p + 22, size, 4);
  put(p + 26, nl, 2);
  if (central) put(h + 42, off, 4);
  return central ? 46 : 30;
}

/* What the central directory repeats of each member. */
typedef struct {
  uint64_t off, size;
  uint32_t crc;
} zrec;

/* Member name.npy holding x at offset off: written, and recorded in *rec. */
static int zip_member(FILE *f, const char *path, const char *name, tc_tensor *x, uint64_t off, zrec *rec, tc_err *err) {
  const tc_op op = TC_OP_SAVE_NPZ;
  unsigned char head[TC_NPY_HEAD_MAX], h[46];
  char mname[128];
  size_t hn = tc_npy_head(x, head, sizeof head), nl = (size_t)snprintf(mname, sizeof mname, "%s.npy", name);
  if (!hn)
    return tc_err_set(err, TC_E_DTYPE, (int)op, (int)x->dtype, "%s: NumPy has no bf16 dtype; save f32(x) (exact) instead", name);
  if (tc_check_supported(op, x->dtype, err) != 0) return -1;
  *rec = (zrec){off, hn + (uint64_t)tc_numel(x) * tc_dtype_size(x->dtype), 0};
  if (rec->size >= ZIP_LIMIT || off + 30 + nl + rec->size >= ZIP_LIMIT)
    return tc_io_fail(err, op, (int)x->dtype, path, "the archive would pass 4 GiB at %s (save_npz writes no ZIP64):"
                      " save the largest arrays with save", name);
  rec->crc = (uint32_t)crc32(0, head, (uInt)hn);
  tc_tensor *c = tc_contiguous(x, err);   /* once, for the CRC pass and the write */
  if (!c) return -1;
  int rc = tc_io_chunks(c, op, crc_chunk, &rec->crc, err) != 0 ? -1 : 0;
  if (rc == 0) {
    size_t n = zip_header(h, false, rec->crc, rec->size, 0, nl);
    rc = fwrite(h, 1, n, f) != n || fwrite(mname, 1, nl, f) != nl || fwrite(head, 1, hn, f) != hn
             ? 1 : tc_io_chunks(c, op, tc_io_fwrite, f, err);
  }
  tc_tensor_free(c);
  return rc;
}

static int zip_directory(FILE *f, int n, const char *const *names, const zrec *recs, uint64_t end) {
  unsigned char h[46];
  uint64_t cd = 0;
  for (int i = 0; i < n; i++) {
    char mname[128];
    size_t nl = (size_t)snprintf(mname, sizeof mname, "%s.npy", names[i]);
    size_t k = zip_header(h, true, recs[i].crc, recs[i].size, recs[i].off, nl);
    if (fwrite(h, 1, k, f) != k || fwrite(mname, 1, nl, f) != nl) return 1;
    cd += k + nl;
  }
  memset(h, 0, 22);
  put(h, 0x06054b50, 4);
  put(h + 8, (uint64_t)n, 2);
  put(h + 10, (uint64_t)n, 2);
  put(h + 12, cd, 4);
  put(h + 16, end, 4);
  return fwrite(h, 1, 22, f) == 22 ? 0 : 1;
}

static int save_npz(const char *path, int n, const char *const *names, tc_tensor *const *xs, tc_err *err) {
  const tc_op op = TC_OP_SAVE_NPZ;
  zrec recs[64];
  if (n > 64) return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "at most 64 arrays");
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) > 100) return tc_err_set(err, TC_E_BAD_ARG, (int)op, -1, "an array name longer than 100 bytes");
  tc_writer w;
  if (tc_open_write(&w, path, op, err) != 0) return -1;
  int rc = 0;
  uint64_t off = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    rc = zip_member(w.f, path, names[i], xs[i], off, &recs[i], err);
    off += 30 + strlen(names[i]) + 4 + recs[i].size;
  }
  if (rc == 0) rc = zip_directory(w.f, n, names, recs, off);
  if (rc == 1) rc = 0;   /* a write error: ferror is set and tc_close_write reports it */
  return tc_close_write(&w, rc, err);
}

/* Each member's data is read twice (its CRC, then the write): the job's
 * total. */
int tc_save_npz(const char *path, int n, const char *const *names, tc_tensor *const *xs, tc_err *err) {
  int64_t total = 0;
  for (int i = 0; i < n && i < 64; i++) {
    int64_t b = tc_io_bytes(xs[i]);
    total = b > (INT64_MAX - total) / 2 ? INT64_MAX : total + 2 * b;
  }
  tc_io_progress("save_npz", path, total, TC_PROGRESS_BYTES);
  int rc = save_npz(path, n, names, xs, err);
  tc_progress_end();
  return rc;
}
