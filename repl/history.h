/* The REPL's history file (history.c): never a symbolic link, a device, a
 * FIFO or a file that is not libedit history; saved by renaming a new file
 * over the old one. */
#ifndef TC_HISTORY_H
#define TC_HISTORY_H
#include <stdbool.h>
#include <sys/types.h>

typedef struct history_file {
  char *path;     /* NULL: no history this session */
  bool create;    /* the file does not exist yet: tcalc creates it, mode 0600 */
  bool warned;    /* a failed save was reported (once) */
  mode_t mode;    /* the existing file's mode, kept by every save */
} history_file;

/* Finds the file ($TCALC_HISTORY, else ~/.tcalc_history), checks it and
 * loads it into libedit's history; warns once on stderr when it cannot be
 * used, and then the session has no history. */
void history_open(history_file *h);
/* Writes libedit's history to the file (a failure is reported once). */
void history_save(history_file *h);
void history_close(history_file *h);
#endif
