/* The runner: runs source text (line accumulation while brackets are
 * open, statements, session commands, error reports, the exit status) on a
 * session (eval.h: the variables and output options). */
#ifndef TC_RUNNER_H
#define TC_RUNNER_H
#include <stdio.h>
#include "print.h"

typedef struct runner {
  session s;
  bool json, keep_going, color, interactive;
  /* progress bars (repl/progress.c): the :set progress setting, and
   * whether they may be drawn at all (a terminal, not --json or --quiet) */
  bool progress, progress_ok;
  print_opts po;
  int exit_status;        /* of the first failure; 0 if none */
  bool stop;              /* a failure ended the run (no -k), or :quit */
  bool quit;
  FILE *out, *errf;
  const char *source;     /* label of the source for error locations ("<stdin>", a path); NULL: none */
  int cmd_line;           /* line of the session command being run, for its errors */
  int write_errno;        /* stdout failed (EPIPE, ENOSPC, ...): the run stops */
  /* the statement text being accumulated */
  char *buf;
  size_t len, cap;
  int depth;              /* brackets open at the end of buf */
  block_scan bs;          /* brackets and blocks open at the end of buf */
  /* whether buf leaves a block open: a resumable parser fed each line
     (checking is on while the statement has a word that may open one) */
  parser chk;
  arena chk_ar;
  tc_err chk_err;
  bool checking;
  char *doc;              /* comment lines read just before the statement (for :help of a def) */
  size_t doclen;
  int run_depth;          /* :run inside :run */
  /* the trace of the error being reported (calls of user functions) */
  const trace_entry *trace;
  int ntrace;
  int line0, line;        /* first line of buf; lines read so far in this source */
  /* where runner_report last located an error in the current chunk */
  const char *loc_src;
  int32_t loc_len, loc_pos, loc_ls, loc_le;
  int loc_line0, loc_line, loc_col;
} runner;

void runner_init(runner *r);
void runner_free(runner *r);
/* Starts a new source (a file or an -e text): line numbers restart at 1. */
void runner_begin(runner *r);
/* Feeds one line (without its newline). */
void runner_line(runner *r, const char *line, size_t n);
/* The same for a line followed in memory by its '\n' (or a NUL), which
 * may then be read: a statement complete on that line runs from it in
 * place, without a copy (a script's large literal). */
void runner_text_line(runner *r, const char *line, size_t n);
/* Ends the source: text left inside an open bracket is a syntax error. */
void runner_end(runner *r);
/* True while a bracket or a block is open (the REPL shows its continuation prompt). */
bool runner_pending(const runner *r);
/* Runs a whole text as one source. */
void runner_text(runner *r, const char *text);
/* Runs a script file in the current session (:run FILE); -1 when it cannot be read. */
int runner_file(runner *r, const char *path);
/* If SIGINT raised tc_interrupt_flag outside a computation (a blocked
 * read, printing), reports `interrupted` like a failed statement. */
void runner_interrupted(runner *r);
/* The progress bar (progress.c): whether it may be drawn, from the
 * options (at start); the hook installed as r's settings say (after
 * :set progress); a script's job of its lines (the caller ends it). */
void runner_progress_setup(runner *r, bool quiet);
void runner_progress_apply(const runner *r);
void runner_progress_script(const char *path, int64_t lines);
/* Whether the bar's last erase also took the "^C" the terminal echoed
 * (an interrupted job's), leaving the cursor on an empty line; asking
 * forgets it. */
bool runner_progress_took_ctrl_c(void);
/* The lines of a text of n bytes (a last one without its newline too). */
int64_t runner_count_lines(const char *text, size_t n);
/* Installs handler for signal sig with sigaction: no signal blocked while
 * it runs, flags as given (0: no SA_RESTART, so that a blocked read
 * returns; SA_RESETHAND: the next one has the default action). */
void runner_catch_signal(int sig, void (*handler)(int), int flags);
/* Reports an error as text or JSON. src/len/line0: the statement text. */
void runner_report(runner *r, const tc_err *e, const char *src, int32_t len, int line0);
/* The line and column runner_report gives an error in src. */
void runner_position(runner *r, const tc_err *e, const char *src, int32_t len, int line0, int *line, int *col);
/* :compare EXPR (compare.c). */
void runner_compare(runner *r, const char *full, size_t off);
/* Parses the statement of a session command (:time, :verify) that starts
 * at off in the command line full, in a copy of the line with the command
 * blanked out, so that error positions point into the line as typed.
 * *copy is that copy, to free after the arena; NULL (and PARSE_ERROR,
 * out_of_memory in err) when it cannot be made. */
parse_status runner_parse_command(const char *full, size_t off, arena *ar, tc_err *err, char **copy, node **stmt);
/* :verify STMT: runs an expression on both engines and compares (verify.c).
 * full is the whole command line; STMT starts at off. */
void runner_verify(runner *r, const char *full, size_t off);
/* The capability table, as text or JSON. */
int print_caps(FILE *f, bool json);   /* -1: out of memory, nothing printed */
/* "2G", "512M", "1.5G", "1000000" -> bytes; 0 on a bad size. Digits with
 * an optional K, M, G or T suffix (powers of 1024, optionally followed by
 * i and B), or a decimal with a suffix (rounded to the nearest byte); 1 to
 * 2^63-1 bytes, exactly. No sign, NaN, infinity or hex. */
uint64_t parse_size(const char *s);
/* Every callable name, one a line (for the man page check). */
void print_function_list(FILE *f);
/* The session commands, for completion: the i-th name (":help"), NULL past
 * the last; and the words the argument of the command that line starts
 * with completes to (NULL: none), *more when a value follows the word. */
const char *runner_command_name(int i);
const char *const *runner_command_words(const char *line, bool *more);
#endif
