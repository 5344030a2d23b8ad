/* The REPL on a terminal: prompts, libedit history and Tab completion of
 * functions, variables and session commands. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>
#include <wchar.h>
#include <editline/readline.h>
#include "history.h"
#include "repl.h"

static runner *cur;

/* Words that follow a command, when it takes one of a fixed set
 * (runner_command_words), and whether a value follows the word. */
static const char *const *arg_words;
static bool arg_more;

static char *complete_gen(const char *text, int state) {
  static int i, phase;
  size_t n = strlen(text);
  if (!state) { i = 0; phase = 0; }
  if (arg_words) {
    while (arg_words[i]) {
      const char *w = arg_words[i++];
      if (!strncmp(w, text, n)) return strdup(w);
    }
    return NULL;
  }
  if (text[0] == ':') {
    const char *c;
    while ((c = runner_command_name(i++)))
      if (!strncmp(c, text, n)) return strdup(c);
    return NULL;
  }
  if (phase == 0) {
    while (i < fn_count()) {
      const char *name = fn_get(i++)->name;
      if (!strncmp(name, text, n)) return strdup(name);
    }
    phase = 1;
    i = 0;
  }
  while (i < cur->s.nvars) {
    const char *name = cur->s.vars[i++].name;
    if (!strncmp(name, text, n)) return strdup(name);
  }
  return NULL;
}

static bool is_command(const char *w) {
  const char *c;
  for (int i = 0; (c = runner_command_name(i)); i++)
    if (!strcmp(c, w)) return true;
  return false;
}

/* Completes the word before the cursor. A unique function name gets its
 * opening parenthesis, a command a space, a variable nothing. */
static char **complete(const char *text, int start, int end) {
  (void)start;
  (void)end;
  rl_attempted_completion_over = 1;
  /* after ":set " and ":engine " the choices are fixed words */
  arg_words = runner_command_words(rl_line_buffer ? rl_line_buffer : "", &arg_more);
  char **m = rl_completion_matches(text, complete_gen);
  rl_completion_append_character = ' ';
  /* one match: GNU readline returns {match}, libedit {match, match} */
  if (m && m[0] && (!m[1] || (!m[2] && !strcmp(m[0], m[1])))) {
    if (is_command(m[0]) || (arg_words && arg_more)) rl_completion_append_character = ' ';
    else if (arg_words) rl_completion_append_character = '\0';
    else if (fn_find(m[0])) rl_completion_append_character = '(';
    else rl_completion_append_character = '\0';
  }
  return m;
}

static void on_sigint(int sig) {
  (void)sig;
  tc_interrupt_signal();
}

/* Set when Ctrl-C ended the line being typed (prompt_getc). */
static bool prompt_cancelled;

/* libedit's character source. Before every read it looks at the interrupt
 * flag, with SIGINT blocked until pselect unblocks it, so a Ctrl-C that
 * arrives while libedit is busy between two reads (redrawing a slow
 * terminal) still ends the line, and the text typed before it cannot leak
 * into the next one. It returns end of input then; libedit hands back
 * what was typed, and repl_run drops it. Multibyte input is decoded here
 * in the terminal's locale, one character per call. */
static int prompt_getc(FILE *in) {
  int fd = fileno(in);
  mbstate_t st;
  memset(&st, 0, sizeof st);
  sigset_t sigint, old;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  for (;;) {
    sigprocmask(SIG_BLOCK, &sigint, &old);
    if (tc_interrupt_flag) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      prompt_cancelled = true;
      return -1;
    }
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    int k = pselect(fd + 1, &rd, NULL, NULL, NULL, &old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (k < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    unsigned char b;
    ssize_t n = read(fd, &b, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return -1;
    wchar_t wc;
    size_t r = mbrtowc(&wc, (const char *)&b, 1, &st);
    if (r == (size_t)-2) continue;            /* more bytes of one character */
    if (r == (size_t)-1) return b;            /* not valid here: the byte itself */
    return (int)wc;
  }
}

/* libedit's settings and the SIGINT handler for the prompt. */
static void prompt_setup(void) {
  /* Multibyte characters edit as characters; numbers are still formatted
   * in the C locale, which LC_CTYPE does not touch. */
  setlocale(LC_CTYPE, "");
  rl_readline_name = "tcalc";
  rl_getc_function = prompt_getc;
  rl_attempted_completion_function = complete;
  rl_basic_word_break_characters = " \t\n()[],=+-*/%@&|^~!<>;";
  using_history();
  stifle_history(1000);
  /* SIGINT only raises a flag: kernels poll it between blocks, the
   * evaluator turns it into an `interrupted` error, and at the prompt
   * libedit hands it on to us after restoring the terminal. No SA_RESTART,
   * so that a read at the prompt returns. */
  runner_catch_signal(SIGINT, on_sigint, 0);
}

/* The statement typed so far over one or more lines: one history entry,
 * added (and saved) when the statement is complete, unless it repeats the
 * entry before. */
typedef struct {
  char *text, *last;
  size_t len;
} entry_buf;

static void entry_add_line(entry_buf *en, const char *line, bool complete, history_file *hist) {
  size_t n = strlen(line);
  char *e = realloc(en->text, en->len + n + 2);
  if (e) {
    en->text = e;
    if (en->len) en->text[en->len++] = '\n';
    memcpy(en->text + en->len, line, n + 1);
    en->len += n;
  }
  if (!complete) return;
  if (e && en->len && (!en->last || strcmp(en->last, en->text))) {
    add_history(en->text);
    free(en->last);
    en->last = strdup(en->text);
    history_save(hist);
  }
  en->len = 0;
}

void repl_run(runner *r, bool quiet) {
  cur = r;
  prompt_setup();
  history_file hist;
  history_open(&hist);
  if (!quiet)
    printf("tcalc %s. Type :help for functions and commands, Ctrl-D to leave.\n", TC_VERSION);
  runner_begin(r);
  entry_buf en = {NULL, NULL, 0};
  while (!r->quit) {
    tc_interrupt_clear();
    prompt_cancelled = false;
    fflush(stdout);
    char prompt[32] = "tcalc> ";
    if (tc_get_semantics() != TC_SEM_TCALC) snprintf(prompt, sizeof prompt, "tcalc[%s]> ", tc_semantics_name(tc_get_semantics()));
    char *line = readline(runner_pending(r) ? "  ...> " : prompt);
    if (prompt_cancelled) {
      free(line);
      line = NULL;
    }
    if (!line) {
      if (tc_interrupt_flag) {   /* Ctrl-C at the prompt: drop the line and any open statement */
        fputs("^C\n", stdout);
        r->len = 0;
        r->depth = 0;
        en.len = 0;
        continue;
      }
      break;                     /* Ctrl-D */
    }
    if (tc_interrupt_flag) {
      /* Ctrl-C at the prompt that libedit read on past (it discarded the
       * text typed before it): the same as above, but the new line stays */
      tc_interrupt_clear();
      r->len = 0;
      r->depth = 0;
      en.len = 0;
    }
    /* the lines of one statement (a recalled entry holds several) */
    r->stop = false;
    for (char *p = line; !r->quit;) {
      char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      runner_line(r, p, n);
      if (!nl) break;
      p = nl + 1;
    }
    entry_add_line(&en, line, !runner_pending(r), &hist);
    free(line);
  }
  if (!r->quit) fputc('\n', stdout);
  history_close(&hist);
  free(en.last);
  free(en.text);
  r->exit_status = 0;
}
