/* Internals shared by the runner's files: reporting, JSON outcomes, the
 * session command table, :help and :time. */
#ifndef TC_RUNNER_INT_H
#define TC_RUNNER_INT_H
#include <cjson/cJSON.h>
#include "runner.h"

/* Reports e (text or JSON) and records the failure: the exit status, and
 * the end of the run unless -k (report.c). */
void runner_fail(runner *r, const tc_err *e, const char *src, int32_t len, int line0);
/* A session command's error, at the command's line. */
void cmd_error(runner *r, tc_code code, const char *fmt, const char *arg);
/* Output that cannot be written (a closed pipe, a full disk) ends the run. */
void check_output(runner *r);

/* JSON outcomes built with cJSON (report.c): cjson_begin, build, emit. */
void cjson_begin(void);
int cjson_emit(FILE *f, cJSON *o);              /* -1: something was not allocated */
void emit_outcome(runner *r, cJSON *o);         /* out_of_memory reported instead */
void json_text(runner *r, const char *type, const char *text);

/* The session commands (commands.c): dispatch, completion and :help read
 * this one table. arg is the text after the command's name; full the
 * whole line, arg starting at off in it. */
typedef struct command {
  const char *name;               /* without the colon */
  const char *aliases[3];         /* other names the dispatcher accepts (not completed) */
  void (*run)(runner *r, char *arg, const char *full, size_t off);
  const char *const *words;       /* the words its argument completes to, or NULL */
  bool more;                      /* a value follows the word (:set precision N) */
  const char *usage;              /* for :help */
  const char *doc;                /* for :help :NAME */
  bool stmt;                      /* the argument is a statement, whose # comment its lexer ends */
} command;
extern const command runner_commands[];
void run_command(runner *r, char *line);

int help_text(FILE *f, const char *name);       /* help.c; -1: no such function */
int print_caps_json(FILE *f, bool outcome);
void cmd_time(runner *r, const char *full, size_t off);   /* timing.c */
/* The statement of a command (:time STMT, :compare EXPR), parsed into ar
 * with its text's copy in *text (the caller frees both); NULL after
 * reporting why: out of memory, a syntax error, no statement or (with
 * expr_only) one that is not an expression: `needs` says what it needs. */
node *runner_command_stmt(runner *r, const char *full, size_t off, arena *ar, char **text, bool expr_only,
                          const char *needs);
#endif
