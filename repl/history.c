/* The REPL's history file, kept so that it can never clobber a file that
 * is not tcalc's: it is used only when it is a regular file (never through
 * a symbolic link) that is empty or already holds libedit history, or when
 * tcalc creates it; it is opened without blocking (a FIFO cannot hang the
 * start) and read only up to HIST_MAX_BYTES. Every save writes a new file
 * beside it and renames it over the old one, so the old history survives a
 * failed write, and a file tcalc did not create keeps its mode. Anything
 * else: one warning, and the REPL runs without history. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <editline/readline.h>
#include "history.h"

#define HIST_MAX_BYTES ((off_t)1 << 20)
#define HIST_MAGIC "_HiStOrY_V2_\n"

/* The history file: $TCALC_HISTORY (empty or /dev/null: none), else
 * $HOME/.tcalc_history (HOME unset or empty: none). */
static char *history_path(void) {
  const char *h = getenv("TCALC_HISTORY");
  if (h) return *h && strcmp(h, "/dev/null") ? strdup(h) : NULL;
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  size_t n = strlen(home) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/.tcalc_history", home);
  return p;
}

static void hist_off(history_file *h, const char *why, int errnum) {
  fprintf(stderr, "tcalc: history file %s: %s%s%s; running without history\n", h->path, why, errnum ? ": " : "",
          errnum ? strerror(errnum) : "");
  free(h->path);
  h->path = NULL;
}

/* libedit reads a file by name: this names the descriptor already checked. */
static void fd_name(char *buf, size_t n, int fd) { snprintf(buf, n, "/proc/self/fd/%d", fd); }

void history_open(history_file *h) {
  memset(h, 0, sizeof *h);
  h->path = history_path();
  if (!h->path) return;
  int fd = open(h->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) { h->create = true; return; }   /* made at the first save */
    hist_off(h, errno == ELOOP ? "is a symbolic link (not followed)" : "cannot open", errno == ELOOP ? 0 : errno);
    return;
  }
  struct stat st;
  char head[sizeof HIST_MAGIC - 1];
  ssize_t got = 0;
  if (fstat(fd, &st) != 0) hist_off(h, "cannot read", errno);
  else if (!S_ISREG(st.st_mode)) hist_off(h, "is not a regular file", 0);
  else if (st.st_size > HIST_MAX_BYTES) hist_off(h, "is larger than 1 MiB", 0);
  else if (st.st_size > 0 && ((got = pread(fd, head, sizeof head, 0)) != (ssize_t)sizeof head ||
                              memcmp(head, HIST_MAGIC, sizeof head)))
    hist_off(h, got < 0 ? "cannot read" : "does not hold libedit history (left as it is)", got < 0 ? errno : 0);
  if (h->path) {
    h->mode = st.st_mode & 07777;
    char name[64];
    fd_name(name, sizeof name, fd);
    if (st.st_size > 0 && read_history(name) != 0) hist_off(h, "cannot read", 0);
  }
  close(fd);
}

void history_save(history_file *h) {
  if (!h->path) return;
  /* a new file beside the old one, then renamed over it */
  const char *slash = strrchr(h->path, '/');
  size_t dlen = slash ? (size_t)(slash - h->path) + 1 : 0, n = dlen + 32;
  char *tmp = malloc(n);
  if (!tmp) return;
  snprintf(tmp, n, "%.*s.tcalc_history.XXXXXX", (int)dlen, h->path);
  int fd = mkstemp(tmp);   /* mode 0600, O_EXCL: a file of our own */
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    char name[64];
    fd_name(name, sizeof name, fd);
    int rc = write_history(name);
    if (rc != 0) err = rc > 0 ? rc : EIO;
    else if (!h->create && fchmod(fd, h->mode) != 0) err = errno;   /* the replaced file's mode */
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, h->path) != 0) err = errno;
    if (err) unlink(tmp);
  }
  free(tmp);
  if (err) {
    if (!h->warned) fprintf(stderr, "tcalc: cannot write history to %s: %s\n", h->path, strerror(err));
    h->warned = true;
  } else if (h->create) {
    h->create = false;
    h->mode = 0600;
  }
}

void history_close(history_file *h) {
  free(h->path);
  h->path = NULL;
}
